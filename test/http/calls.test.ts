// /api/v1/leads/{leadId}/calls: the calls held with a lead.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, type ApiResponse, type TestApp } from '../helpers.ts';
import {
  assertInvalid, assertProblem, CALL_FIELDS, countRows, createCall, createLead, db, ISO_MS, UUID,
} from './support.ts';

for (const kind of BACKENDS) {
  describe(kind, () => {
    const clock = new ManualClock('2026-04-01T09:00:00.000Z');
    let t: TestApp;
    let A: { id: string };
    let key: string;
    let keyB: string;
    let lead: any;

    before(async () => {
      t = await startTestApp(kind, { clock });
      A = await t.workspace('pro');
      const B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      keyB = (await t.key(B.id)).key;
      lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines Ltd' });
    });
    after(() => t?.close());

    const post = (body: unknown, leadId = lead.id, k = key) => t.api('POST', `/api/v1/leads/${leadId}/calls`, { key: k, body });

    it('creates a call with every field and answers 201 with exactly the call fields', async () => {
      clock.advance(1000);
      const res = await post({ transcript: TRANSCRIPT, title: 'Discovery call', occurredAt: '2026-03-31T14:30:00.000Z', durationSeconds: 1800 });
      assert.equal(res.status, 201, res.text);
      const call = res.json;
      assert.deepEqual(Object.keys(call).sort(), CALL_FIELDS);
      assert.match(call.id, UUID);
      assert.equal(call.leadId, lead.id);
      assert.equal(call.title, 'Discovery call');
      assert.equal(call.occurredAt, '2026-03-31T14:30:00.000Z');
      assert.equal(call.durationSeconds, 1800);
      assert.equal(call.transcript, TRANSCRIPT);
      assert.equal(call.createdAt, clock.now().toISOString());
      assert.match(call.createdAt, ISO_MS);
    });

    it('answers null for the optional fields left out or sent as null', async () => {
      for (const body of [{ transcript: 'Ada: hello there, nice to meet you.' }, { transcript: 'x', title: null, occurredAt: null, durationSeconds: null }]) {
        const call = await createCall(t, key, lead.id, body);
        assert.deepEqual(Object.keys(call).sort(), CALL_FIELDS);
        assert.equal(call.title, null);
        assert.equal(call.occurredAt, null);
        assert.equal(call.durationSeconds, null);
      }
    });

    it('writes occurredAt back in UTC with milliseconds, whatever offset it was sent with', async () => {
      const call = await createCall(t, key, lead.id, { transcript: 'x', occurredAt: '2026-03-31T16:30:00+02:00' });
      assert.equal(call.occurredAt, '2026-03-31T14:30:00.000Z');
    });

    it('keeps a transcript of exactly 200,000 characters, and zero as a duration', async () => {
      const transcript = 'Ada: ' + 'a'.repeat(200_000 - 5);
      const call = await createCall(t, key, lead.id, { transcript, durationSeconds: 0 });
      assert.equal(call.transcript.length, 200_000);
      assert.equal(call.durationSeconds, 0);
    });

    describe('format', () => {
      const vtt = 'WEBVTT\n\n1\n00:00:01.200 --> 00:00:04.000\n<v Jonas Meyer>Hi Ada, thanks for joining.</v>\n\n'
        + '2\n00:00:04.500 --> 00:00:09.000\n<v Ada Lovelace>Happy to. Reporting takes four days.</v>\n';
      const srt = '1\n00:00:01,200 --> 00:00:04,000\nJonas: Hi Ada.\n\n2\n00:00:04,500 --> 00:00:09,000\nAda: Hello.\n';

      it("stores and serves the transcript's detected format, on create and in the list", async () => {
        const formatted = await createLead(t, key, { name: 'Formatted' });
        const made: Array<[string, string]> = [[TRANSCRIPT, 'rep-prospect'], [vtt, 'webvtt'], [srt, 'srt'],
          ['Speaker 1: hi this is jonas\nSpeaker 2: hey jonas', 'speaker-n'], ['We talked about reporting.', 'plain']];
        for (const [transcript, format] of made) {
          clock.advance(1000);
          const call = await createCall(t, key, formatted.id, { transcript });
          assert.equal(call.format, format, transcript.slice(0, 40));
        }
        const stored = await db(t).selectFrom('calls').select(['transcript', 'format'])
          .where('lead_id', '=', formatted.id).orderBy('created_at').execute();
        assert.deepEqual(stored.map((row) => row.format), made.map(([, format]) => format));
        const listed = (await t.api('GET', `/api/v1/leads/${formatted.id}/calls`, { key })).json.data;
        assert.deepEqual(listed.map((c: any) => c.format), made.map(([, format]) => format).reverse());
      });

      it('detects the format of a call stored before formats were (a null column) when it is read', async () => {
        const older = await createLead(t, key, { name: 'Older' });
        const call = await createCall(t, key, older.id, { transcript: vtt });
        await db(t).updateTable('calls').set({ format: null }).where('id', '=', call.id).execute();
        const listed = (await t.api('GET', `/api/v1/leads/${older.id}/calls`, { key })).json.data;
        assert.equal(listed[0].format, 'webvtt');
      });

      it('detects a 200,000-character transcript from its start only, on the request path', async () => {
        const long = await createLead(t, key, { name: 'Long' });
        const transcript = `${vtt}\n${'<v '.repeat(66_000)}`.slice(0, 200_000);
        const call = await createCall(t, key, long.id, { transcript });
        assert.equal(call.format, 'webvtt');
      });
    });

    const invalid: Array<[string, unknown, string[]]> = [
      ['no transcript', {}, ['transcript']],
      ['a title but no transcript', { title: 'Call' }, ['transcript']],
      ['an empty transcript', { transcript: '' }, ['transcript']],
      ['a null transcript', { transcript: null }, ['transcript']],
      ['a transcript over 200,000 characters', { transcript: 'a'.repeat(200_001) }, ['transcript']],
      ['a transcript that is not a string', { transcript: ['Ada: hi'] }, ['transcript']],
      ['an occurredAt that is not a date', { transcript: 'x', occurredAt: 'yesterday' }, ['occurredAt']],
      ['an occurredAt without a time', { transcript: 'x', occurredAt: '2026-03-31' }, ['occurredAt']],
      ['an impossible occurredAt', { transcript: 'x', occurredAt: '2026-13-45T25:61:00Z' }, ['occurredAt']],
      ['a numeric occurredAt', { transcript: 'x', occurredAt: 1_700_000_000_000 }, ['occurredAt']],
      ['a negative duration', { transcript: 'x', durationSeconds: -1 }, ['durationSeconds']],
      ['a fractional duration', { transcript: 'x', durationSeconds: 1.5 }, ['durationSeconds']],
      ['a duration as text', { transcript: 'x', durationSeconds: '60' }, ['durationSeconds']],
      ['a title over 200 characters', { transcript: 'x', title: 't'.repeat(201) }, ['title']],
      ['an unknown field', { transcript: 'x', leadId: randomUUID() }, ['leadId']],
      ['an array body', [], []],
    ];
    for (const [what, body, fields] of invalid) {
      it(`refuses ${what} with 400`, async () => {
        assertInvalid(await post(body), fields, what);
      });
    }

    it('refuses a non-JSON body with 415', async () => {
      const res = await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, raw: 'Ada: hello', headers: { 'content-type': 'text/plain' } });
      assertProblem(res, 415, 'unsupported_media_type');
    });

    it('creates nothing for a refused request', async () => {
      const before = await countRows(t, 'calls', A.id);
      for (const [, body] of invalid) await post(body);
      assert.equal(await countRows(t, 'calls', A.id), before);
    });

    it('answers 404 for an unknown or malformed lead, and for a lead of another workspace', async () => {
      assertProblem(await post({ transcript: 'x' }, randomUUID()), 404, 'not_found');
      assertProblem(await post({ transcript: 'x' }, 'not-a-lead'), 404, 'not_found');
      const before = await countRows(t, 'calls');
      const res = await post({ transcript: 'x' }, lead.id, keyB);
      assertProblem(res, 404, 'not_found');
      assert.ok(!res.text.includes('Analytical'));
      assert.equal(await countRows(t, 'calls'), before, 'no call was added to the other workspace\'s lead');
    });

    describe('GET /api/v1/leads/{leadId}/calls', () => {
      it("lists the lead's calls newest first, and only that lead's", async () => {
        const fresh = await createLead(t, key, { name: 'Listed' });
        const other = await createLead(t, key, { name: 'Other' });
        const made = [];
        for (let i = 0; i < 4; i++) {
          clock.advance(1000);
          made.push(await createCall(t, key, fresh.id, { transcript: `Call ${i}`, title: `Call ${i}` }));
          await createCall(t, key, other.id, { transcript: `Other ${i}` });
        }
        const res = await t.api('GET', `/api/v1/leads/${fresh.id}/calls`, { key });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.json), ['data']);
        assert.deepEqual(res.json.data, [...made].reverse(), 'the same objects as created, newest first');
        const limited = await t.api('GET', `/api/v1/leads/${fresh.id}/calls?limit=2`, { key });
        assert.deepEqual(limited.json.data.map((c: any) => c.id), [made[3].id, made[2].id]);
      });

      it('pages through every call once with the Link header', async () => {
        const busy = await createLead(t, key, { name: 'Busy' });
        const made: string[] = [];
        for (let i = 0; i < 7; i++) {
          clock.advance(1000);
          made.push((await createCall(t, key, busy.id, { transcript: `Call ${i}` })).id);
        }
        const seen: string[] = [];
        let next: string | null = `/api/v1/leads/${busy.id}/calls?limit=3`;
        while (next) {
          const res: ApiResponse = await t.api('GET', next, { key });
          assert.equal(res.status, 200, res.text);
          seen.push(...res.json.data.map((c: any) => c.id));
          const link = res.headers.get('link');
          next = link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null : null;
          if (next) assert.match(next, /limit=3/, 'the next link keeps the page size');
        }
        assert.deepEqual(seen, [...made].reverse());
        assertInvalid(await t.api('GET', `/api/v1/leads/${busy.id}/calls?cursor=bm9wZQ`, { key }), ['cursor']);
      });

      it('answers {data: []} for a lead without calls', async () => {
        const quiet = await createLead(t, key, { name: 'Quiet' });
        assert.deepEqual((await t.api('GET', `/api/v1/leads/${quiet.id}/calls`, { key })).json, { data: [] });
      });

      it("answers 404 for an unknown lead and another workspace's lead", async () => {
        assertProblem(await t.api('GET', `/api/v1/leads/${randomUUID()}/calls`, { key }), 404, 'not_found');
        assertProblem(await t.api('GET', `/api/v1/leads/${lead.id}/calls`, { key: keyB }), 404, 'not_found');
      });

      for (const bad of ['0', '101', 'abc']) {
        it(`refuses limit=${bad} with 400`, async () => {
          assertInvalid(await t.api('GET', `/api/v1/leads/${lead.id}/calls?limit=${bad}`, { key }), ['limit']);
        });
      }
    });
  });
}
