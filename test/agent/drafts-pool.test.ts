// A hostile megabyte of a call in each format a rep pastes (DESIGN §10, §12): the offline engine's three steps and
// the draft's checks run in the CPU pool, as a run makes them, within the pool's time budget and in time that grows
// linearly with the transcript. The calls are the fixtures of test/agent/transcripts, repeated to a megabyte.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { RunContext } from '../../src/agent/engine.ts';
import type { ResearchOutput } from '../../src/schemas/outputs.ts';
import { detectFormat, type TranscriptFormat } from '../../src/agent/transcript/index.ts';
import { createCpuPool } from '../../src/cpu/pool.ts';

const MiB = 1 << 20;
/** The pool's budget for each step here: generous for linear work on a loaded 2-core machine, far below quadratic. */
const BUDGET_MS = 30_000;
const FIXTURES = path.join(import.meta.dirname, 'transcripts');

/** Each format's fixture, and what of it repeats (a header such as WEBVTT is said once). */
const FORMATS: Array<[TranscriptFormat, string, RegExp | null]> = [
  ['webvtt', 'zoom.vtt', /^WEBVTT[^\n]*\n+/],
  ['webvtt', 'teams.vtt', /^WEBVTT[^\n]*\n+/],
  ['srt', 'subtitles.srt', null],
  ['otter', 'otter.txt', null],
  ['otter', 'fireflies.txt', null],
  ['timestamped', 'timestamped.txt', null],
  ['rep-prospect', 'rep-prospect.txt', null],
  ['speaker-n', 'speaker-n.txt', null],
  ['labelled', 'labelled.txt', null],
  ['meet', 'meet.txt', /^[^]*?\n00:00:00\n+/],
];

const research: ResearchOutput = {
  engine: 'offline',
  website: { url: null, fetched: false, status: null, error: null, title: null, description: null, summary: null },
  facts: [],
  sources: [],
};

/** The fixture repeated to `size` characters: its header once, then its body again and again, cut at a line. */
function repeated(file: string, header: RegExp | null, size: number): string {
  const text = readFileSync(path.join(FIXTURES, file), 'utf8').replace(/\r\n/g, '\n');
  const head = header?.exec(text)?.[0] ?? '';
  const body = `${text.slice(head.length).trimEnd()}\n\n`;
  const whole = head + body.repeat(Math.ceil((size - head.length) / body.length));
  return whole.slice(0, whole.lastIndexOf('\n', size) + 1);
}

describe('a hostile megabyte of each format, through the offline engine and the draft checks in the CPU pool', () => {
  const pool = createCpuPool({ budgetMs: BUDGET_MS, threads: 1 });
  after(() => pool.close());

  async function draftIn(transcript: string): Promise<{ ms: number; body: string; passed: boolean }> {
    const ctx: RunContext & { research: ResearchOutput } = {
      runId: 'r', lead: { id: 'l', name: 'Pat Lee', email: null, companyName: 'Lee Co', companyWebsite: null },
      call: { id: 'c', title: null, transcript, occurredAt: null }, senderName: 'Sam Rep', research,
    };
    const started = performance.now();
    const analysis = (await pool.run('analyse', ctx)).output;
    const strategy = (await pool.run('strategise', { ...ctx, analysis })).output;
    const draft = (await pool.run('write', { ...ctx, analysis, strategy, feedback: null })).output;
    const checks = await pool.run('checkDraft', { draft, ctx: { ...ctx, analysis, strategy } });
    return { ms: performance.now() - started, body: draft.body, passed: checks.failed.every((f) => !/^leak/.test(f)) };
  }

  for (const [format, file, header] of FORMATS) {
    it(`${file} (${format}): 1 MiB within the budget, four times the size in well under sixteen times the time`, async () => {
      const [small, large] = [repeated(file, header, MiB / 4), repeated(file, header, MiB)];
      assert.equal(detectFormat(large), format);
      await draftIn(small); // the thread warm: its modules loaded, its code compiled
      // Linear work takes about 4 times as long on 4 times the text, quadratic 16; below 200 ms it is noise. The best
      // of up to three turns of each size: other processes on the cores only ever add time.
      let [quarter, whole] = [Infinity, Infinity];
      for (let turn = 0; turn < 3 && !(whole < Math.max(10 * quarter, 200)); turn++) {
        quarter = Math.min(quarter, (await draftIn(small)).ms);
        const drafted = await draftIn(large);
        assert.ok(drafted.passed, `no leak in the draft of a megabyte: ${drafted.body}`);
        whole = Math.min(whole, drafted.ms);
      }
      assert.ok(whole < Math.max(10 * quarter, 200), `${Math.round(quarter)} ms for 256 KiB, ${Math.round(whole)} ms for 1 MiB`);
    });
  }
});
