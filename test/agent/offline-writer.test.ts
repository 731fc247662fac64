// The offline writer against the rules of DESIGN §12, on calls of our own (test/fixtures/calls/offline-writer.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { PreviousDraft, RunContext } from '../../src/agent/engine.ts';
import { offlineRules } from '../../src/agent/engines/offline.ts';
import { inOurWords, SaidIndex } from '../../src/agent/engines/offline/copying.ts';
import { bodyWords } from '../../src/agent/engines/offline/feedback.ts';
import { readCallFacts } from '../../src/agent/engines/offline/facts.ts';
import { restate, secondPerson } from '../../src/agent/engines/offline/writing.ts';
import { detectFormat, readTranscript } from '../../src/agent/engines/offline/transcript.ts';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import type { ResearchOutput } from '../../src/schemas/outputs.ts';
import { signOff } from '../../src/agent/sign-off.ts';
import { HVAC_VTT, NOT_NOW_LABELLED, SCHOOL_SPEAKERS } from '../fixtures/calls/offline-writer.ts';

const research: ResearchOutput = {
  engine: 'offline',
  website: { url: null, fetched: false, status: null, error: null, title: null, description: null, summary: null },
  facts: [],
  sources: [],
};

function ctxFor(transcript: string, name: string, company: string): RunContext & { research: ResearchOutput } {
  return {
    runId: 'r', lead: { id: 'l', name, email: null, companyName: company, companyWebsite: null },
    call: { id: 'c', title: null, transcript, occurredAt: null }, senderName: null, sender: { name: 'Sam Rep', signature: 'Sam Rep, Vendor Ltd' }, research,
  };
}

function run(transcript: string, name: string, company: string, feedback: string | null = null, previousDraft: PreviousDraft | null = null) {
  const ctx = ctxFor(transcript, name, company);
  const analysis = offlineRules.analyse(ctx).output;
  assertStepOutput('ANALYSIS', analysis);
  const strategy = offlineRules.strategise({ ...ctx, analysis }).output;
  assertStepOutput('STRATEGY', strategy);
  const draft = offlineRules.write({ ...ctx, analysis, strategy, feedback, previousDraft }).output;
  assertStepOutput('WRITER', draft);
  return { analysis, draft, said: new SaidIndex(readCallFacts(transcript, name, null, company).sentences.map((s) => s.text)) };
}

const CALLS: Array<[string, string, string, string]> = [
  ['HVAC WebVTT', HVAC_VTT, 'Tom Ellery', 'Ellery Foods'],
  ['school Speaker N', SCHOOL_SPEAKERS, 'Janet Moss', 'Hillside Academy'],
  ['not-now labelled', NOT_NOW_LABELLED, 'Carl Brooks', 'Brooks Accounting'],
];

describe('offline writer: the rules of DESIGN §12', () => {
  it('detects the formats and tells the rep from the buyer', () => {
    assert.equal(detectFormat(HVAC_VTT), 'webvtt');
    assert.equal(detectFormat(SCHOOL_SPEAKERS), 'speaker-n');
    assert.equal(detectFormat(NOT_NOW_LABELLED), 'labelled');
    const t = readTranscript(SCHOOL_SPEAKERS, { leadName: 'Janet Moss', senderName: null, leadCompany: null });
    assert.deepEqual(t.speakers.map((s) => [s.label, s.role]), [['Speaker 1', 'rep'], ['Speaker 2', 'buyer']]);
    assert.ok(t.utterances.every((u) => !/\b(um|uh)\b/.test(u.text)));
  });

  for (const [label, transcript, name, company] of CALLS) {
    it(`${label}: within 150 words, clean, no 8-word run from the call, signed once`, () => {
      const { draft, said } = run(transcript, name, company);
      assert.ok(bodyWords(draft.body) <= 150, draft.body);
      assert.doesNotMatch(draft.body, /-->|<v|\[\d|Speaker \d|\b(um|uh)\b|^(Priya Nair|Tom Ellery|Dana Whitfield|Carl Brooks):/m, draft.body);
      assert.equal(said.copiedRun(draft.body), null, draft.body);
      // signOff's ending: the signature opens with the sender's name, so the name is not written above it as well.
      assert.ok(draft.body.endsWith(`\n\n${signOff({ name: 'Sam Rep', signature: 'Sam Rep, Vendor Ltd' })}`), draft.body);
      assert.match(draft.body, /\n-- \nSam Rep, Vendor Ltd$/);
      assert.equal(draft.body.match(/Sam Rep/g)?.length, 1);
    });
  }

  it('keeps every commitment with its date and ends on the agreed next step', () => {
    const { draft, analysis } = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods');
    assert.match(draft.body, /case study/);
    assert.match(draft.body, /by Wednesday/i);
    assert.match(draft.body, /Monday at 3pm/);
    assert.match(draft.body, /Rita/);
    assert.match(draft.body, /(?:nine|9) hours/);
    assert.equal(analysis.commitments?.[0]?.when, 'by Wednesday');
    assert.ok(analysis.evidence?.some((e) => e.kind === 'pain' && e.lines.length > 0));
  });

  it('reads lower-case speech: commitments and the next step', () => {
    const { draft } = run(SCHOOL_SPEAKERS, 'Janet Moss', 'Hillside Academy');
    assert.match(draft.body, /data protection summary/);
    assert.match(draft.body, /by Thursday/i);
    assert.match(draft.body, /the 9th at 4 ?pm/i);
  });

  it('a "not now" call gets a short note that asks for nothing', () => {
    const { draft, analysis } = run(NOT_NOW_LABELLED, 'Carl Brooks', 'Brooks Accounting');
    assert.equal(analysis.sentiment, 'negative');
    assert.ok(bodyWords(draft.body) <= 80, draft.body);
    assert.match(draft.body, /overview/);
    assert.match(draft.body, /April/);
    assert.doesNotMatch(draft.body, /\?|next week|this week|20 minutes/);
  });

  it('sentiment is the buyer’s: a rep’s enthusiasm does not make it positive', () => {
    const keen = 'Rep: This is amazing, I love it, great, perfect!\nProspect: We will see. I am not convinced.';
    assert.equal(run(keen, 'Pat Lee', 'Lee Co').analysis.sentiment, 'neutral');
  });

  it('the rep’s lines are never the buyer’s pains', () => {
    const call = 'Rep: Most teams lose 20 hours a week to manual reconciliation, is that you?\nProspect: No, our pain is the 12 percent of invoices paid late.';
    const { analysis } = run(call, 'Pat Lee', 'Lee Co');
    assert.ok(analysis.painPoints.every((p) => !/reconciliation/.test(p)), analysis.painPoints.join('|'));
  });

  it('follows feedback: a word limit keeps commitments and the next step; formal; casual; mention; drop; lead with', () => {
    const first = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods').draft;
    const prev = (d: typeof first, version = 1): PreviousDraft => ({ version, subject: d.subject, body: d.body });
    const short = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'under 50 words', prev(first)).draft;
    assert.ok(bodyWords(short.body) < 50, short.body);
    assert.match(short.body, /case study/);
    assert.match(short.body, /Monday at 3pm/);
    const formal = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'more formal', prev(first)).draft;
    assert.match(formal.body, /^Dear Tom Ellery,/);
    assert.doesNotMatch(formal.body, /[’']ll|[’']re|!|^Hi/m);
    const casual = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'more casual', prev(formal, 2)).draft;
    assert.match(casual.body, /^Hey Tom,/);
    const drop = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'drop the cost', prev(first)).draft;
    assert.doesNotMatch(drop.body, /42,000|cost/i);
    assert.match(drop.body, /case study/);
    const lead = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'lead with the chiller failure', prev(first)).draft;
    assert.match(lead.body.split('\n\n')[1]!, /chiller/i);
    const mention = run(SCHOOL_SPEAKERS, 'Janet Moss', 'Hillside Academy', 'mention the safeguarding follow ups', null).draft;
    assert.match(mention.body, /safeguarding/);
  });

  it('empty feedback gives another variant; output is deterministic', () => {
    const a = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods').draft;
    assert.deepEqual(run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods').draft, a);
    const b = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', '', { version: 1, subject: a.subject, body: a.body }).draft;
    assert.notEqual(b.body, a.body);
    assert.match(b.body, /case study/);
  });

  it('a hostile 1 MiB transcript stays bounded', () => {
    const line = 'Speaker 2: we lose 5 hours a week and I will send you the the the report by Friday and and ';
    const hostile = line.repeat(Math.ceil((1 << 20) / line.length)) + 'x'.repeat(200_000);
    const started = performance.now();
    const { draft } = run(hostile, 'Pat Lee', 'Lee Co');
    assert.ok(performance.now() - started < 20_000);
    assert.ok(bodyWords(draft.body) <= 150);
  });
});

describe('offline writer: regenerating after a person’s edit', () => {
  it('keeps the sentences the person added, unless the feedback drops them, and writes its own afresh', () => {
    const { draft } = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods');
    const added = 'Our Leeds team can also show you the dashboard on site.';
    const paragraphs = draft.body.split('\n\n');
    const body = [...paragraphs.slice(0, 2), added, ...paragraphs.slice(2)].join('\n\n');
    const edited: PreviousDraft = { version: 2, subject: draft.subject, body, origin: 'edited' };

    const again = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'Make it more formal.', edited).draft;
    assert.ok(again.body.includes(added), again.body);
    assert.equal(again.body.split(added).length, 2, 'once');
    assert.match(again.body, /case study/, 'the commitments stay');
    assert.equal(again.body.match(/Monday at 3pm/gi)?.length, draft.body.match(/Monday at 3pm/gi)?.length, 'no sentence of ours kept twice');

    const dropped = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'Drop the dashboard.', edited).draft;
    assert.ok(!dropped.body.includes('dashboard'), dropped.body);

    const generated = run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'Make it more formal.', { ...edited, origin: 'generated' }).draft;
    assert.ok(!generated.body.includes(added), 'only a person’s edit is kept as theirs');
    assert.deepEqual(run(HVAC_VTT, 'Tom Ellery', 'Ellery Foods', 'Make it more formal.', edited).draft, again, 'deterministic');
  });
});

describe('offline reading: small words that misled it', () => {
  it('keeps "pm" after a time lower-case, and reads the time a call has as no pain', () => {
    const said = readTranscript('Rep: see you at 2 pm and the 10:30 pm slot\nAda: sure', { leadName: 'Ada Lee', senderName: null, leadCompany: null });
    assert.equal(said.utterances[0]!.text, 'See you at 2 pm and the 10:30 pm slot.');
    const facts = readCallFacts('Rep: Thanks for the time.\nAda: No problem, you have about twenty minutes.\nAda: Our reps lose six hours a week on manual entry.', 'Ada Lee', null, null);
    assert.deepEqual(facts.pains.map((p) => p.text), ['Our reps lose six hours a week on manual entry.']);
  });
});

describe('offline writer: the copy guard keeps phrases whole', () => {
  const name = (w: string): boolean => /\d/.test(w) || (/^[A-Z]/.test(w) && !/^(?:The|A|Our|Your|And)$/.test(w));
  const guard = (said: string, text: string): string => inOurWords(text, new SaidIndex([said]), name, true);
  const DANGLING = /\b(?:the|a|an|and|or|of|to|in|on|at|by|with|from|between|every|how|get|understand)$/i;

  it('rephrases a figure rather than cutting it off, and never ends on a dangling word', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['My dispatchers handle every call by phone in Samsara, twelve minutes each, and most end up as callbacks.',
        'your dispatchers handle every call by phone in Samsara, twelve minutes each', /\b12 minutes each$/],
      ['We are opening a second warehouse, Northfield, on April 9, and I want the new scanners there first.',
        'you are opening a second warehouse, Northfield, on April 9', /April 9th$/],
      ['The cold room failure cost us 40 thousand dollars in stock at the depot last spring.',
        'the cold room failure cost you 40 thousand dollars in stock at the depot', /\$40,000/],
    ];
    for (const [said, text, kept] of cases) {
      const out = guard(said, text);
      assert.match(out, kept);
      assert.doesNotMatch(out, DANGLING);
      assert.equal(new SaidIndex([said]).copiedRun(out), null);
    }
  });

  it('drops a clause it cannot keep whole: no lone "every time…", no half a "from … to …" range', () => {
    assert.equal(guard('Every time we update the price list the shelf labels go out of date and I redo them.',
      'every time you update the price list the shelf labels go out of date'), '');
    assert.equal(guard('I need to see how you get from temperature readings to spoiled stock avoided.',
      'you need to see how you get from temperature readings to spoiled stock avoided'), '');
  });

  it('keeps "your" before a measure: "distributors your size", never "distributors the size"', () => {
    const out = guard('Honestly we mostly sell to distributors your size across the whole region today.',
      'you mostly sell to distributors your size across the whole region today');
    assert.match(out, /distributors your size/);
  });
});

describe('offline writer: names and capitals after a colon', () => {
  const CALL = `Sam: Thanks for making the time today. What is slowing the property team down?
Adeyemi: Reporting takes four days at every month end, and the owners keep asking for it sooner.
Adeyemi: Our portfolio manager Bola runs the numbers with me.
Sam: Understood. I'll send you a sample owner report by Friday.
Adeyemi: Good. Let's talk again on Tuesday at 3pm with Bola.`;

  it('a clause after a colon starts lower-case unless it starts on a name', () => {
    const { draft } = run(CALL, 'Ngozi Adeyemi', 'Harbour Lets');
    assert.match(draft.body, /stood out: reporting\b/);
  });

  it('the lead is never thanked as a stakeholder by their surname', () => {
    assert.ok(!readCallFacts(CALL, 'Ngozi Adeyemi', null, 'Harbour Lets').stakeholders.includes('Adeyemi'));
    assert.doesNotMatch(run(CALL, 'Ngozi Adeyemi', 'Harbour Lets').draft.body, /Adeyemi for joining/);
  });
});

describe('offline writer: wording a rep would send', () => {
  const transcript = (file: string) => readFileSync(new URL(`./transcripts/${file}`, import.meta.url), 'utf8');
  const name = (w: string): boolean => /\d/.test(w) || (/^[A-Z]/.test(w) && !/^(?:The|A|Our|Your|And)$/.test(w));
  const guard = (said: string, text: string): string => inOurWords(text, new SaidIndex([said]), name, true);

  it('turns the buyer’s words to face them: their "your report" is ours, their "with us" is them', () => {
    assert.equal(secondPerson('I want to see your own SOC 2 report'), 'you want to see our own SOC 2 report');
    assert.equal(secondPerson('Halden is on a fixed fee arrangement with us'), 'Halden is on a fixed fee arrangement with you');
    assert.equal(secondPerson('i want to see how you get from sensors to dollars'), 'you want to see how we get from sensors to dollars');
    assert.equal(secondPerson('we sell mostly in the US'), 'you sell mostly in the US');
  });

  it('says a copied run another way without odd swaps: no "including you", no "plus send", no "share you"', () => {
    const fee = guard('And we cannot bill all of that because Halden is on a fixed fee arrangement with us and every hour is lost.',
      'Halden is on a fixed fee arrangement with you and every hour is lost');
    assert.doesNotMatch(fee, /including you|plus every/);
    const audit = guard('Within a week I will run a zero-results audit and send you the results with an estimate.',
      'within a week I will run a zero-results audit and send you the results with an estimate');
    assert.doesNotMatch(audit, /plus send|share you/);
  });

  it('keeps a list whole: neither "between the repair the scrap" nor "Sweden, Germany" alone', () => {
    const out = restate('Quick context: we do about 28 million euros online a year across Sweden, Germany and the Netherlands.', '28 million euros');
    assert.match(out, /Sweden, Germany and the Netherlands$/);
    const cut = guard('It was about 85 thousand dollars between the repair, the scrap and the overtime to catch up that month.',
      'it was about 85 thousand dollars between the repair, the scrap and the overtime to catch up');
    assert.doesNotMatch(cut, /between the repair,? the scrap$/);
  });

  it('never cuts a condition off ("nothing goes in" without its "until…"), and tells reported speech as said', () => {
    const said = 'And nothing goes into the trial until I have read the residency statement from your team.';
    assert.doesNotMatch(guard(said, 'nothing goes into the trial until you have read the residency statement'), /^nothing (?:goes|went) into the trial$/);
    const opening = guard('Timing matters because we are opening a fourth location, Eastgate, on May 6, and more.',
      'you are opening a fourth location, Eastgate, on May 6');
    assert.match(opening, /^you mentioned you were opening|^you are opening/);
  });

  it('drops the infinitive whose object the clause cannot name, and a preamble before a colon', () => {
    assert.equal(restate('and we have until October 31 to get under it before the fines start', /October/), 'you have until October 31 before the fines start');
    assert.match(restate('So the short version: our pickers walk eleven kilometres a shift.', null), /^your pickers walk/);
  });

  it('an accepted pilot with no date is the agreed next step, and the call to action asks when', () => {
    const call = transcript('pilot-zoom.vtt');
    const facts = readCallFacts(call, 'Pieter de Vries', 'Dana Okafor', 'Vries Logistics');
    assert.equal(facts.nextStep?.what, 'four-week pilot at the Rotterdam depot');
    assert.equal(facts.nextStep?.when, null);
    const { draft, analysis } = run(call, 'Pieter de Vries', 'Vries Logistics');
    assert.match(draft.body, /Looking forward to the four-week pilot at the Rotterdam depot\. Which week would suit you to start\?/);
    assert.doesNotMatch(draft.body, /short call next week/);
    assert.match(draft.body, /security whitepaper/);
    assert.match(draft.body, /by Thursday/i);
    assert.match(draft.body, /see our (?:own )?security documentation/);
    assert.equal(analysis.agreedNextStep?.what, 'four-week pilot at the Rotterdam depot');
    assert.equal(analysis.sentiment, 'positive', 'a buyer who takes up the pilot and says it sounds good');
  });

  it('"drop the pricing" leaves out the money, not the pains', () => {
    const call = transcript('teams-logistics.vtt');
    const first = run(call, 'Kwame Mensah', 'Mensah Haulage').draft;
    assert.match(first.body, /38,000/);
    const dropped = run(call, 'Kwame Mensah', 'Mensah Haulage', 'drop the pricing', { ...first, version: 1, origin: 'generated' }).draft;
    assert.doesNotMatch(dropped.body, /38,000|\$|dollars/);
    assert.match(dropped.body, /1,200 invoices a month by hand/);
    assert.match(dropped.body, /sample audit report/);
  });

  it('"Black Friday" keeps its capital after a colon', () => {
    const CALL = 'Leo: What is the timing?\nHannah: Black Friday is our deadline, November 28.\nLeo: I’ll send the case study today.';
    assert.match(run(CALL, 'Hannah Marlow', 'Marlow & Finch').draft.body, /On timing: Black Friday is your deadline, November 28/);
  });
});

describe('offline writer: lower-case speech', () => {
  it('writes the acronyms lower-case speech spells small ("roi" → "ROI"), and joins two actions with ", then"', () => {
    const CALL = [
      'Speaker 1: hi greg this is luis from sensorline thanks for taking the call',
      'Speaker 2: we lose six hours a week on line 3 and i want to see the roi before anything else',
      'Speaker 1: i will run a downtime audit on line 3 and send you the results with the roi math by friday',
      'Speaker 2: fine send it over',
    ].join('\n');
    const { draft, said } = run(CALL, 'Greg Halvorsen', 'Halvorsen Plastics');
    assert.match(draft.body, /\bROI\b/);
    assert.doesNotMatch(draft.body, /\broi\b/);
    assert.doesNotMatch(draft.body, /plus (?:then )?send/);
    assert.match(draft.body, /audit on line 3, then send/);
    assert.match(draft.body, /by Friday/);
    assert.match(draft.body, /downtime audit/);
    assert.equal(said.copiedRun(draft.body), null, draft.body);
  });
});

describe('offline writer: figures said in words', () => {
  it('a pain whose figure is spelled out ("fourteen spreadsheets") is told with it, not passed over', () => {
    const CALL = [
      'Sam: Thanks for joining, Aisha. How do you keep the audit evidence today?',
      'Aisha: I am still tracking everything in fourteen spreadsheets, and it is a mess.',
      'Sam: I will send you our integration list by Friday.',
    ].join('\n');
    assert.match(run(CALL, 'Aisha Karim', 'Brightpath').draft.body, /fourteen spreadsheets/);
  });
});

describe('offline writer: two points and an agreed pilot', () => {
  const CALL = [
    '[00:00:04] Grace: Thanks for making the time, Ada. How are things going with the sales team?',
    '[00:00:11] Ada: Honestly, not great. My reps spend about 15 hours a week copying call notes into Salesforce.',
    '[00:00:40] Ada: And the CRM is always out of date, so our forecast is basically a guess.',
    '[00:02:02] Grace: Great. How about a two-week pilot with the Leeds team?',
    '[00:02:06] Ada: That sounds good. Can you send me the security documentation first?',
    '[00:02:12] Grace: I’ll send it over today, and I’ll put together a pilot plan by Friday.',
  ].join('\n');

  it('"Two things" are two: a second point that starts as the buyer did ("And the CRM…") is joined, not cut off', () => {
    const { draft, said } = run(CALL, 'Ada Lovelace', 'Kestrel');
    const points = draft.body.split('\n\n')[1]!;
    assert.match(points, /15 hours a week/);
    assert.match(points, /CRM is always out of date/);
    assert.equal(said.copiedRun(draft.body), null, draft.body);
  });

  it('"That sounds good" takes up the proposed pilot: it is the call to action', () => {
    const { draft } = run(CALL, 'Ada Lovelace', 'Kestrel');
    assert.match(draft.body, /Looking forward to the two-week pilot with the Leeds team\./);
    assert.doesNotMatch(draft.body, /scope a pilot/);
  });
});
