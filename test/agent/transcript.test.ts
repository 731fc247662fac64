// Reading transcripts as reps have them (src/agent/transcript/): each format read into cleaned utterances with their
// line, speaker and side; the sample calls of shared/drafts when they are there; and hostile input read in linear time.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { testCpu } from '../support/cpu.ts';
import {
  detectFormat, readTranscript, type People, type Transcript, type TranscriptFormat,
} from '../../src/agent/transcript/index.ts';

/** The run's people: the lead, the sender, the lead's company. */
const who = (leadName: string, senderName: string | null, leadCompany: string | null = null): People =>
  ({ leadName, senderName, leadCompany });

const FIXTURES = path.join(import.meta.dirname, 'transcripts');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');

/** Nothing of the transcript's markup is left in what was said, and every utterance reads as a sentence. */
function assertClean(transcript: Transcript): void {
  const labels = transcript.speakers.map((speaker) => speaker.label.toLowerCase());
  for (const { text } of transcript.utterances) {
    assert.doesNotMatch(text, /-->|WEBVTT|\d{1,2}:\d{2}:\d{2}|<\/?[a-z]|&amp;|\[|\]|\*\*/i, text);
    assert.doesNotMatch(text, /\b(?:um+|uh+|uhm|erm|inaudible|crosstalk)\b/i, text);
    assert.doesNotMatch(text, /\b(\w+),? \1(?![\w'’])/i, `no stutter in: ${text}`);
    assert.ok(!labels.some((label) => text.toLowerCase().startsWith(`${label}:`)), text);
    assert.match(text, /^[\p{Lu}\p{N}"'“]/u, `sentence case: ${text}`);
    assert.match(text, /[.!?…]["'”)]?$/, `punctuated: ${text}`);
  }
}

type Said = [line: number, speaker: string | null, role: string, text: string];

function said(transcript: Transcript): Said[] {
  return transcript.utterances.map((u) => [u.line, u.speaker, u.role, u.text]);
}

function sides(transcript: Transcript): Record<string, string> {
  return Object.fromEntries(transcript.speakers.map((speaker) => [speaker.label, speaker.role]));
}

describe('readTranscript, format by format', () => {
  it('WebVTT from Zoom: cue numbers, timings and "Name:" heads; a speaker over two cues is one turn', () => {
    const t = readTranscript(fixture('zoom.vtt'), who('Tom Becker', 'Priya Nair'));
    assert.equal(t.format, 'webvtt');
    assert.deepEqual(sides(t), { 'Priya Nair': 'rep', 'Tom Becker': 'buyer', 'Elena Ruiz': 'buyer' });
    assert.deepEqual(said(t), [
      [5, 'Priya Nair', 'rep', 'Morning Tom, morning Elena. Thanks for making the time, I know quarter end is close.'],
      [9, 'Tom Becker', 'buyer', 'No problem. So Elena runs our warehouse ops, she\'s the one who feels it most.'],
      [13, 'Elena Ruiz', 'buyer', 'Yeah. We lose about nine hours a week re-keying orders from the portal into the '
        + 'ERP. '
        + 'And when someone mistypes a SKU it ships wrong, which costs us about 40 dollars a return.'],
      [21, 'Priya Nair', 'rep', 'That\'s a lot of re-keying. Which ERP are you on?'],
      [25, 'Tom Becker', 'buyer', 'NetSuite. We moved last year.'],
      [29, 'Priya Nair', 'rep',
        'Good, we have a native NetSuite connector. I\'ll send you the connector guide by Thursday.'],
    ]);
    assertClean(t);
  });

  it('WebVTT from Teams: a NOTE, cue ids, <v> voice tags with "Last, First (Guest)", entities and a marker', () => {
    const t = readTranscript(fixture('teams.vtt'), who('Tom Becker', 'Priya'));
    assert.equal(t.format, 'webvtt');
    assert.deepEqual(t.speakers, [
      { label: 'Becker, Tom', name: 'Tom Becker', company: null, role: 'buyer' },
      { label: 'Priya Nair', name: 'Priya Nair', company: null, role: 'rep' },
      { label: 'Dana Whitfield', name: 'Dana Whitfield', company: null, role: 'buyer' },
    ]);
    assert.deepEqual(said(t), [
      [7, 'Becker, Tom', 'buyer', 'Can everyone hear me okay?'],
      [11, 'Priya Nair', 'rep', 'Loud and clear. So, I wanted to start with the returns you mentioned.'],
      [15, 'Becker, Tom', 'buyer', 'Right. We get around 300 returns a month and the & mess is that nobody owns the '
        + 'refund step. '
        + 'It sits for a week.'],
      [23, 'Dana Whitfield', 'buyer', 'I\'m Dana, I look after finance. The week is what hurts our cash flow.'],
      [27, 'Priya Nair', 'rep', 'Understood. Could we look at the refund flow together next Tuesday at 2?'],
    ]);
    assertClean(t);
  });

  it('SRT: numbers, comma timings, "Name:" in the cue, a cue over two lines, an italic tag before the name', () => {
    const t = readTranscript(fixture('subtitles.srt'),
      who('Sam Okafor', 'Marta Kowalski', 'Okafor & Brandt'));
    assert.equal(t.format, 'srt');
    assert.deepEqual(sides(t), { 'Marta Kowalski': 'rep', 'Sam Okafor': 'buyer', 'Lena Brandt': 'buyer' });
    assert.deepEqual(said(t), [
      [3, 'Marta Kowalski', 'rep', 'Hi Sam! Thanks for jumping on.'],
      [7, 'Sam Okafor', 'buyer', 'Sure. So our onboarding takes about three weeks per new client.'],
      [12, 'Marta Kowalski', 'rep', 'Three weeks? What takes the longest?'],
      [16, 'Lena Brandt', 'buyer', 'Collecting documents. We chase them by e-mail, it\'s about 40 e-mails per client.'],
      [20, 'Marta Kowalski', 'rep', 'I\'ll send you a short video of our document portal today.'],
    ]);
    assertClean(t);
  });

  it('Otter: a title and keywords skipped, "Name  0:42" heads, text over several lines, accents folded', () => {
    const t = readTranscript(fixture('otter.txt'), who('Karen Liu', 'Raul Jimenez'));
    assert.equal(t.format, 'otter');
    assert.deepEqual(sides(t), { 'Raúl Jiménez': 'rep', 'Karen Liu': 'buyer', 'Devraj Singh': 'buyer' });
    assert.deepEqual(said(t).slice(0, 3), [
      [5, 'Raúl Jiménez', 'rep', 'Hi Karen, hi Dev. Thanks for having me.'],
      [8, 'Karen Liu', 'buyer', 'Hi Raul. So fuel is our biggest line after wages. We spend about 2.1 million a year '
        + 'on it across '
        + '140 trucks.'],
      [12, 'Devraj Singh', 'buyer', 'And our drivers fill up wherever they like. There\'s no policy on it.'],
    ]);
    assert.equal(t.utterances.length, 6);
    assertClean(t);
  });

  it('Fireflies: "Name - 00:00:04" heads, read as Otter; two sides, the lead known: the other sells', () => {
    const t = readTranscript(fixture('fireflies.txt'), who('Peter Gray', null));
    assert.equal(t.format, 'otter');
    assert.deepEqual(sides(t), { 'Ana Souza': 'rep', 'Peter Gray': 'buyer' });
    assert.deepEqual(said(t)[1], [4, 'Peter Gray', 'buyer',
      'Morning. I only have fifteen minutes, so let\'s be quick.']);
    assertClean(t);
  });

  it('"[00:00:02] Name (Company):": companies tell sides; a colleague of the rep sells; a line carried over', () => {
    const t = readTranscript(fixture('timestamped.txt'),
      who('Mina Park', 'Hugo Lambert', 'Orchard Health Inc.'));
    assert.equal(t.format, 'timestamped');
    assert.deepEqual(t.speakers, [
      { label: 'Hugo Lambert', name: 'Hugo Lambert', company: 'Lattice Analytics', role: 'rep' },
      { label: 'Mina Park', name: 'Mina Park', company: 'Orchard Health', role: 'buyer' },
      { label: 'James Ortega', name: 'James Ortega', company: 'Orchard Health', role: 'buyer' },
      { label: 'Ruth Adler', name: 'Ruth Adler', company: 'Lattice Analytics', role: 'rep' },
    ]);
    const carried = t.utterances[4]!;
    assert.deepEqual(carried, {
      line: 5, speaker: 'James Ortega', company: 'Orchard Health', role: 'buyer',
      text: 'Snowflake, mostly. Some in spreadsheets that finance keeps.',
    });
    assert.equal(t.utterances[5]!.line, 7);
    assertClean(t);
  });

  it('SALES/CUSTOMER labels: the sides by their labels, whoever the sender is', () => {
    const t = readTranscript(fixture('rep-prospect.txt'), who('Joe Park', 'Someone Else'));
    assert.equal(t.format, 'rep-prospect');
    assert.deepEqual(t.speakers, [
      { label: 'SALES', name: null, company: null, role: 'rep' },
      { label: 'CUSTOMER', name: null, company: null, role: 'buyer' },
    ]);
    assert.deepEqual(said(t)[3], [4, 'CUSTOMER', 'buyer',
      'We\'re at 1,200 open tickets. Our agents can\'t keep up since we launched in Spain.']);
    assert.equal(t.utterances.length, 8);
    assertClean(t);
  });

  it('"Speaker 1:" lower-case ASR: fillers, stutters, [inaudible]; the rep introduces themselves', () => {
    const people = who('Anita Kapoor', 'Marco Bellini', 'Dunmore Logistics');
    const t = readTranscript(fixture('speaker-n.txt'), people);
    assert.equal(t.format, 'speaker-n');
    assert.deepEqual(t.speakers, [
      { label: 'Speaker 1', name: null, company: null, role: 'rep' },
      { label: 'Speaker 2', name: null, company: null, role: 'buyer' },
      { label: 'Speaker 3', name: null, company: null, role: 'buyer' },
    ]);
    assert.deepEqual(said(t), [
      [1, 'Speaker 1', 'rep', 'Hey Anita this is Marco from fleetwise thanks for taking the time.'],
      [2, 'Speaker 2', 'buyer', 'Yeah sure I\'ve got raj with me he does our dispatch.'],
      [3, 'Speaker 3', 'buyer', 'Hi.'],
      [4, 'Speaker 1', 'rep', 'Hi raj so what does a normal day look like for dispatch?'],
      [5, 'Speaker 3', 'buyer',
        'Honestly it\'s chaos we plan the routes in excel every morning and it takes like two hours.'],
      [6, 'Speaker 2', 'buyer', 'And the drivers call in when something changes so the phones never stop.'],
      [7, 'Speaker 1', 'rep', 'Sorry you cut out a bit there.'],
      [8, 'Speaker 2', 'buyer', 'The phones never stop I said.'],
      [9, 'Speaker 1', 'rep', 'Right and how many vehicles are we talking about?'],
      [10, 'Speaker 3', 'buyer', 'Forty two vans across two depots.'],
      [11, 'Speaker 1', 'rep', 'Okay I\'ll send you a route plan for one depot by Wednesday.'],
    ]);
    assertClean(t);
    // Without a sender to recognise, the one who sounds like the seller (greets the lead by name, introduces
    // themselves with their company, thanks them for their time, asks) sells, and the others buy.
    const anonymous = readTranscript(fixture('speaker-n.txt'), { ...people, senderName: null });
    assert.deepEqual(anonymous.speakers.map((s) => s.role), ['rep', 'buyer', 'buyer']);
    // Nobody who sounds like one: the sides stay unknown.
    const flat = readTranscript('Speaker 1: the weather is fine\nSpeaker 2: it is\nSpeaker 1: good', { ...people, senderName: null });
    assert.deepEqual(flat.speakers.map((s) => s.role), ['unknown', 'unknown']);
  });

  it('"Name: text": a title and a note are nobody\'s; the sender by first name; the lead\'s colleagues buy', () => {
    const t = readTranscript(fixture('labelled.txt'), who('Mei Chen', 'oliver', 'Greenleaf'));
    assert.equal(t.format, 'labelled');
    assert.deepEqual(sides(t), { 'Oliver Grant': 'rep', 'Mei Chen': 'buyer', 'Sophie Martin': 'buyer' });
    assert.deepEqual(said(t)[0], [1, null, 'unknown', 'Call with Greenleaf Dental, 3 March.']);
    assert.deepEqual(said(t)[1], [3, 'Oliver Grant', 'rep', 'Hi Dr. Chen, thanks for taking the call.']);
    assert.deepEqual(said(t)[7], [9, null, 'unknown', 'Follow up after their board meeting on the 20th.']);
    assertClean(t);
  });

  it('Google Meet: the header and attendees skipped, "00:05:00" marks dropped, the turns after them read', () => {
    const t = readTranscript(fixture('meet.txt'), who('Ben Adeyemi', 'Claire Dubois'));
    assert.equal(t.format, 'meet');
    assert.deepEqual(sides(t), { 'Claire Dubois': 'rep', 'Ben Adeyemi': 'buyer', 'Fatima Zahra': 'buyer' });
    assert.deepEqual(t.utterances.map((u) => u.line), [7, 8, 9, 13, 14]);
    assert.equal(t.utterances[3]!.text, 'I\'ll send the duplicate-detection report from our sandbox on Friday.');
    assertClean(t);
  });

  it('subtitles that name nobody: each cue is its own utterance, of nobody', () => {
    const t = readTranscript('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello there.\n\n'
      + '00:00:02.500 --> 00:00:04.000\n<i>We lost two days</i> last month.\n', who('Ada Lee', 'Bob Ray'));
    assert.deepEqual(said(t), [
      [4, null, 'unknown', 'Hello there.'],
      [7, null, 'unknown', 'We lost two days last month.'],
    ]);
  });

  it('call notes with "Budget:" and "Timeline:" heads are notes, not speakers', () => {
    const t = readTranscript('Budget: 50k for the year\nTimeline: live by Q3\nPricing: they found us pricey',
      who('Ada Lee', 'Bob Ray'));
    assert.equal(t.format, 'plain');
    assert.deepEqual(t.speakers, []);
  });

  it('plain text: each paragraph is nobody\'s utterance', () => {
    const t = readTranscript(fixture('plain.txt'), who('Laura Bell', 'Sam Reed'));
    assert.equal(t.format, 'plain');
    assert.deepEqual(t.speakers, []);
    assert.deepEqual(said(t).map(([line, speaker, role]) => [line, speaker, role]),
      [[1, null, 'unknown'], [4, null, 'unknown']]);
    assert.match(t.utterances[0]!.text, /a quarter and set up every laptop/);
  });
});

describe('in the CPU pool', () => {
  it('reads a transcript in a pool thread as on the event loop', async () => {
    const text = fixture('teams.vtt');
    const people = who('Tom Becker', 'Priya Nair');
    assert.deepEqual(await testCpu().run('readTranscript', { text, people }), readTranscript(text, people));
  });
});

describe('who is on which side', () => {
  const lines = (...turns: string[]) => turns.join('\n');

  it('a speaker of a third company is unknown; the lead and the sender still known', () => {
    const t = readTranscript(lines(
      '[00:01] Ann Lee (Acme): Hello.', '[00:02] Bo Chan (Buyerco): Hi.', '[00:03] Cy Diaz (Partnerco): Hey there.',
      '[00:04] Dee Fox (Buyerco): Morning.',
    ), who('Bo Chan', 'Ann Lee', 'BuyerCo'));
    assert.deepEqual(sides(t), { 'Ann Lee': 'rep', 'Bo Chan': 'buyer', 'Cy Diaz': 'unknown', 'Dee Fox': 'buyer' });
  });

  it('a first name shared by the sender and a buyer does not make the buyer a rep', () => {
    const t = readTranscript(lines('Jonas Meyer: Hi all.', 'Jonas Berg: Hi.', 'Maja Lind: Hello.'),
      who('Maja Lind', 'Jonas Meyer'));
    assert.deepEqual(sides(t), { 'Jonas Meyer': 'rep', 'Jonas Berg': 'buyer', 'Maja Lind': 'buyer' });
  });

  it('labels in other cases and with accents match the sender ("JOSÉ ÁLVAREZ" is José Alvarez)', () => {
    const t = readTranscript(lines('JOSÉ ÁLVAREZ: Hola.', 'PAT KIM: Hi.'), who('Pat Kim', 'Jose Alvarez'));
    assert.deepEqual(sides(t), { 'JOSÉ ÁLVAREZ': 'rep', 'PAT KIM': 'buyer' });
  });

  it('with nobody recognisable, every side is unknown', () => {
    const t = readTranscript(lines('Ann Lee: Hello.', 'Bo Chan: Hi.', 'Ann Lee: So.'),
      who('Zed Zee', null));
    assert.deepEqual(sides(t), { 'Ann Lee': 'unknown', 'Bo Chan': 'unknown' });
  });

  it('"Me:" and "Them:" are sides, and "Speaker 2" introducing the lead\'s first name buys', () => {
    assert.deepEqual(sides(readTranscript(lines('Me: Hi.', 'Them: Hello.', 'Me: So.'),
      who('A B', null))), { Me: 'rep', Them: 'buyer' });
    const t = readTranscript(lines('Speaker 1: hello', 'Speaker 2: hi its greg here', 'Speaker 3: hey'),
      who('Greg Hall', null));
    assert.deepEqual(sides(t), { 'Speaker 1': 'unknown', 'Speaker 2': 'buyer', 'Speaker 3': 'unknown' });
  });
});

describe('cleaning what was said', () => {
  const one = (text: string) => readTranscript(`Ada: ${text}\nBob: Fine.`, who('Ada', 'Bob'))
    .utterances[0]!.text;

  it('drops fillers, markers, stutters and tags, and keeps what was meant', () => {
    assert.equal(one('Um, so the the thing is, uh, we we lose (inaudible) two days a month.'),
      'So the thing is, we lose two days a month.');
    assert.equal(one('You know we tried, um, another tool [crosstalk] and it, you know, broke.'),
      'We tried another tool and it broke.');
    assert.equal(one('<b>Can you</b> can you send it 00:01:02.500 by Friday'), 'Can you send it by Friday?');
    assert.equal(one('I- I think w- we had had enough.'), 'I think we had had enough.');
  });

  it('capitalises lower-case speech and ends it, a question with a question mark', () => {
    assert.equal(one('so um what does pricing look like for bob in july'),
      'So what does pricing look like for Bob in July?');
    assert.equal(one('i think we can start in june'), 'I think we can start in June.');
    assert.equal(one('when it\'s already failed i said'), 'When it\'s already failed I said.');
  });
});

describe('detectFormat', () => {
  it('reads the start of a transcript only', () => {
    const zoom = fixture('zoom.vtt');
    assert.equal(detectFormat(zoom + 'Ada: x\n'.repeat(30_000)), 'webvtt');
    const prose = 'We talked about the budget and the timeline for the rollout. '.repeat(200);
    assert.equal(detectFormat(`${prose}\n${fixture('labelled.txt')}`), 'plain', 'labels past 8 KB are not read');
  });

  it('names each layout', () => {
    const cases: Array<[string, TranscriptFormat]> = [
      ['WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nhello', 'webvtt'],
      ['00:00:01.000 --> 00:00:02.000\n<v Ada>hello', 'webvtt'],
      ['1\n00:00:01,000 --> 00:00:02,000\nhello', 'srt'],
      ['Ada: hello\nBob: hi', 'labelled'],
      ['**Ada**: hello\n**Bob**: hi', 'labelled'],
      ['REP: hello\nPROSPECT: hi', 'rep-prospect'],
      ['speaker 1: hello\nspeaker 2: hi', 'speaker-n'],
      ['(00:01) Ada: hello\n(00:05) Bob: hi', 'timestamped'],
      ['Ada Lee  0:01\nhello\nBob Ray  0:05\nhi', 'otter'],
      ['Title\n\n00:00:00\n\nAda: hello\nBob: hi', 'meet'],
      ['Just a note: it went well.', 'plain'],
      ['', 'plain'],
    ];
    for (const [text, format] of cases) assert.equal(detectFormat(text), format, text);
  });
});

describe('the sample calls of shared/drafts', () => {
  // Beside the project, as scripts/test.ts finds the conformance suite; SHARED_DIR names another place (a worktree's).
  const dir = path.resolve(import.meta.dirname, '../..', process.env.SHARED_DIR ?? '../shared', 'drafts/calls');
  const present = existsSync(dir);
  const EXPECTED: Record<string, TranscriptFormat> = {
    '02': 'webvtt', '03': 'otter', '04': 'speaker-n', '05': 'rep-prospect', '07': 'srt', '10': 'timestamped',
    '11': 'labelled', '17': 'meet',
  };
  const calls = present ? readdirSync(dir).filter((name) => name.endsWith('.txt')) : [];

  const skip = !present && 'no ../shared/drafts/calls';
  it('reads each call in its format, with the rep\'s lines on the rep\'s side', { skip }, () => {
    assert.ok(calls.length > 0);
    for (const name of calls) {
      const notes = JSON.parse(readFileSync(path.join(dir, name.replace(/\.txt$/, '.json')), 'utf8'));
      const people = who(notes.lead.name, notes.repName, notes.lead.companyName);
      const text = readFileSync(path.join(dir, name), 'utf8');
      const t = readTranscript(text, people);
      const expected = EXPECTED[name.slice(0, 2)];
      if (expected) assert.equal(t.format, expected, name);
      else assert.notEqual(t.format, 'plain', name);
      const reps = t.speakers.filter((speaker) => speaker.role === 'rep');
      assert.equal(reps.length, 1, `${name}: one rep, ${JSON.stringify(t.speakers)}`);
      const rep = reps[0]!;
      if (t.speakers.some((speaker) => speaker.label === notes.repName)) assert.equal(rep.label, notes.repName, name);
      assert.ok(t.speakers.every((speaker) => speaker.role === 'buyer' || speaker === rep), name);
      const original = text.split(/\r?\n/);
      for (const u of t.utterances) {
        assert.equal(u.role, u.speaker === rep.label ? 'rep' : 'buyer', `${name}: ${u.text}`);
        // The utterance starts on its line: its last word of the first few is there (fillers may go before it).
        const word = u.text.split(' ').slice(0, 3).at(-1)!.replace(/[^\p{L}\p{N}]/gu, '').toLowerCase();
        const there = original[u.line - 1]!.replace(/[^\p{L}\p{N}]/gu, '').toLowerCase();
        assert.ok(there.includes(word), `${name}:${u.line} has "${word}"`);
      }
      assertClean(t);
    }
  });
});

// A full collection before each timed read, so that no read pays for the garbage of the one before it.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** The CPU time of `work` in milliseconds: unlike the wall clock, it does not count the time other processes had. */
function cpuMs(work: () => void): number {
  collectGarbage();
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * The times to read `make(size)` and `make(2 * size)`, each the best of a few tries taken in turns: noise only ever
 * adds time, and taking turns gives both sizes the same conditions.
 */
function timesOf(make: (size: number) => string, size: number, people: People): [number, number] {
  const texts = [make(size), make(2 * size)];
  const best = [Infinity, Infinity];
  for (let i = 0; i < 4; i++) {
    for (let n = 0; n < texts.length; n++) best[n] = Math.min(best[n]!, cpuMs(() => readTranscript(texts[n]!, people)));
  }
  return [best[0]!, best[1]!];
}

describe('hostile transcripts are read in linear time', () => {
  const MiB = 1 << 20;
  const people: People = who('Ada Lovelace', 'Bob Ray', 'Acme');
  const fill = (head: string, unit: string, tail = '') => (size: number) =>
    head + unit.repeat(Math.ceil((size - head.length - tail.length) / unit.length)) + tail;
  const letters = (i: number) => {
    let name = '';
    for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
    return name;
  };
  const many = (line: (i: number) => string) => (size: number) => {
    const out: string[] = [];
    let length = 0;
    for (let i = 0; length < size; i++) {
      out.push(line(i));
      length += out.at(-1)!.length + 1;
    }
    return out.join('\n');
  };
  const CASES: Array<[string, (size: number) => string]> = [
    ['one enormous line of words', fill('Ada: ', 'word ')],
    ['one enormous word', fill('', 'a')],
    ['millions of -->', fill('WEBVTT\n\n', '-->')],
    ['timings of nothing', fill('', '1\n00:00:01,000 --> 00:00:02,000\n-->\n\n')],
    ['repeated <v in a cue', fill('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n', '<v ')],
    ['repeated <v closed at the end', fill('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n', '<v ', '>')],
    ['repeated [ in a turn', fill('Ada: hi\nBob: ', '[')],
    ['repeated [ closed at the end', fill('Ada: hi\nBob: ', '[', ']')],
    ['repeated ( in a stamped turn', fill('[00:00:01] Ada (Acme): hi\n[00:00:02] Bob: ', '(', ')')],
    ['repeated {\\ and <', fill('Ada: hi\nBob: ', '{\\<')],
    ['colons without end', fill('Ada: hi\nBob: ', 'a:')],
    ['spaces before a break', fill('Ada: hi\nBob: x', ' ', '\r')],
    ['carriage returns', fill('Ada: hi\n', '\r')],
    ['stutters', fill('Ada: hi\nBob: ', 'the ')],
    ['fillers', fill('Ada: hi\nBob: ', 'um, ')],
    ['combining marks', fill('Ada: hi\nBob: ', 'e\u0301')],
    ['100k speakers', many((i) => `${letters(i)}: ok`)],
    ['otter heads', many((i) => `${letters(i)} Ray  0:${String(i % 60).padStart(2, '0')}\nhi`)],
    ['meet marks', fill('Title\n\nAda: hi\nBob: hello\n', '00:05:00\n')],
    ['numbered speakers', many((i) => `Speaker ${i % 9999}: this is bob from acme um the the`)],
  ];
  for (const [what, make] of CASES) {
    it(`${what}: 1 MiB in bounded time, twice the size in at most about twice the time`, () => {
      const [small, large] = timesOf(make, MiB / 2, people);
      assert.ok(large < 5000, `${what}: 1 MiB read in ${large.toFixed(0)} ms`);
      // Below some 50 ms the ratio is the collector's noise; above, linear work doubles and quadratic work quadruples.
      if (large > 50) assert.ok(large / small < 3, `${what}: ${small.toFixed(1)} ms → ${large.toFixed(1)} ms`);
    });
  }
});
