// Drafts a rep would send, made by real runs on both backends (DESIGN §12): a call in each format a rep pastes is
// read in its format and gives a clean, short draft with every check passed; each kind of feedback a rep gives, asked
// in turn with reject-and-regenerate, is followed on the latest version, with the commitments and the next step kept.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bodyWords } from '../../src/agent/engines/offline/feedback.ts';
import type { TranscriptFormat } from '../../src/agent/transcript/index.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, startRun } from '../http/support.ts';

const FIXTURES = path.join(import.meta.dirname, 'transcripts');
const fixture = (file: string) => readFileSync(path.join(FIXTURES, file), 'utf8');

/** A call in each format, with who the lead is: the fixtures of test/agent/transcripts. */
const CALLS: Array<[string, TranscriptFormat, { name: string; companyName: string }]> = [
  ['pilot-zoom.vtt', 'webvtt', { name: 'Pieter de Vries', companyName: 'Vries Logistics' }],
  ['teams-logistics.vtt', 'webvtt', { name: 'Kwame Mensah', companyName: 'Mensah Haulage' }],
  ['asr-lowercase.txt', 'speaker-n', { name: 'Tom Brady', companyName: 'Brady Stores' }],
  ['not-now-otter.txt', 'otter', { name: 'Sofia Marin', companyName: 'Marin Foods' }],
  ['subtitles.srt', 'srt', { name: 'Peter Gray', companyName: 'Gray Services' }],
  ['fireflies.txt', 'otter', { name: 'Peter Gray', companyName: 'Gray Services' }],
  ['timestamped.txt', 'timestamped', { name: 'Ada Lovelace', companyName: 'Kestrel' }],
  ['rep-prospect.txt', 'rep-prospect', { name: 'Ada Lovelace', companyName: 'Kestrel' }],
  ['labelled.txt', 'labelled', { name: 'Ada Lovelace', companyName: 'Kestrel' }],
  ['meet.txt', 'meet', { name: 'Ben Adeyemi', companyName: 'Acme Robotics' }],
];

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED', 'COMPLETED', 'REJECTED'].includes(r.status);
/** Markup a rep would never send: timings, cue numbers, tags, markers, fillers (the checks look for the call's labels). */
const LEAK = /-->|<\/?v\b|\[(?:inaudible|crosstalk)\]|\b(?:um|uh)\b|\b\d{1,2}:\d{2}:\d{2}\b|^WEBVTT|^\d+$|^(?:Speaker \d+|REP|PROSPECT):/mu;

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await startTestApp(kind);
      const workspace = await t.workspace('pro');
      key = (await t.key(workspace.id)).key;
      await t.startWorker();
    });
    after(() => t?.close());

    async function drafted(file: string, lead: { name: string; companyName: string }): Promise<{ run: any; call: any }> {
      const made = await createLead(t, key, { ...lead, email: `${lead.name.split(' ')[0]!.toLowerCase()}@example.com` });
      const call = await createCall(t, key, made.id, { transcript: fixture(file) });
      const started = await startRun(t, key, made.id, call.id);
      const run = await waitForRun(t, key, started.id, atRest, 60_000);
      assert.equal(run.status, 'AWAITING_APPROVAL', JSON.stringify(run.steps.map((s: any) => s.error)));
      return { run, call };
    }

    it('a call in each format: read in its format, drafted short and clean, every check of the draft passed', async () => {
      for (const [file, format, lead] of CALLS) {
        const { run, call } = await drafted(file, lead);
        assert.equal(call.format, format, file);
        const { body } = run.emailDraft;
        assert.ok(bodyWords(body) <= 150, `${file}: ${body}`);
        const paragraphs = body.split('\n\n');
        assert.doesNotMatch(paragraphs.slice(1).join('\n\n'), LEAK, `${file}: ${body}`);
        const writer = run.steps.find((s: any) => s.node === 'WRITER').output;
        assert.deepEqual(writer.checks?.failed ?? [], [], `${file}: ${body}`);
      }
    });

    it('each kind of feedback on the latest version, the commitments and the agreed next step kept', async () => {
      const { run } = await drafted('pilot-zoom.vtt', CALLS[0]![2]);
      const kept = (body: string, what: string) => {
        assert.match(body, /security whitepaper/, `${what}: ${body}`);
        assert.match(body, /by Thursday/i, `${what}: ${body}`);
        assert.match(body, /pilot at the Rotterdam depot/, `${what}: ${body}`);
      };
      kept(run.emailDraft.body, 'the first draft');
      let latest = run.emailDraft;
      const FEEDBACK: Array<[string | null, (body: string, before: string) => void]> = [
        ['under 80 words', (body) => assert.ok(bodyWords(body) < 80, body)],
        ['more formal', (body) => {
          assert.match(body, /^Dear /);
          assert.doesNotMatch(body, /\b\w+['’](?:ll|re|ve|m|d|t)\b|!/);
          assert.ok(bodyWords(body) < 85, 'the limit asked before still holds');
        }],
        ['more casual', (body) => assert.match(body, /^Hey /)],
        ['mention the floor plan', (body) => assert.match(body, /floor plan/i)],
        ['lead with the pilot', (body) => assert.match(body.split('\n\n')[1]!, /pilot/i)],
        ['drop the mis-picks', (body) => assert.doesNotMatch(body, /mis-?picks/i)],
        ['try another angle', (body, before) => assert.notEqual(body, before)],
        [null, (body, before) => assert.notEqual(body, before, 'empty feedback gives another variant')],
      ];
      for (const [feedback, holds] of FEEDBACK) {
        const res = await t.api('POST', `/api/v1/runs/${run.id}/reject`, { key, body: feedback === null ? { regenerate: true } : { feedback, regenerate: true } });
        assert.equal(res.status, 200, res.text);
        const again = await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL' && r.emailDraft.version > latest.version, 60_000);
        holds(again.emailDraft.body, latest.body);
        kept(again.emailDraft.body, String(feedback));
        latest = again.emailDraft;
      }
    });
  });
}
