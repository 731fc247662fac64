// GET /api/v1/analytics/outreach (DESIGN §16), on both backends, over thousands of seeded e-mails and replies: every
// figure of every group (week, sender, angle, sequence step) is recomputed here from the raw rows, one e-mail at a
// time, and must equal the endpoint's; weeks are the workspace's (its sending settings' zone, across a daylight-saving
// switch); a range narrows it, weeks without e-mails show at zero, another workspace's rows never count, bad ranges are
// 400 and a key without runs:read is 403. The endpoint reads outreach_outcomes (migration 0057): every row of it must
// equal its e-mail recounted from the raw rows, after seeding and again after a new reply, corrections through
// "Mark as…", a bounce and the erasure of a lead.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { seedOutreach, SEEDED_ANGLES } from '../../bench/analytics-seed.ts';
import { ManualClock } from '../../src/clock.ts';
import type { DB } from '../../src/db/schema.ts';
import { changeSendingSettings } from '../../src/domain/sending/settings.ts';
import { recordBounce } from '../../src/domain/suppressions/bounces.ts';
import { BACKENDS, createTestDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, db } from '../http/support.ts';

const START = new Date('2026-01-05T08:00:00Z');
const WEEKS = 10;
const EMAILS = 2400;
const NOT_FROM_THE_PERSON = ['out_of_office', 'auto_reply', 'bounce'];

interface Raw {
  deliveryId: string; runId: string; leadId: string; status: string; method: string; deliveredAt: Date; senderId: string | null;
  sender: string | null; angle: string | null; step: number; leadStatus: string;
  replies: Array<{ id: string; receivedAt: Date; classification: string }>;
}

/** Every e-mail the workspace sent over SMTP as stored, with its replies: what the figures are recomputed from. */
async function rawOf(db: Kysely<DB>, workspaceId: string): Promise<Raw[]> {
  const deliveries = (await sql<{
    id: string; run_id: string; lead_id: string; status: string; method: string; delivered_at: Date; sender_user_id: string | null;
    email: string | null; angle: string | null; touch: number; lead_status: string;
  }>`
    SELECT e.id, e.run_id, r.lead_id, e.status, e.method, e.delivered_at, e.sender_user_id, u.email, st.output->>'angle' AS angle, e.touch,
      l.status AS lead_status
    FROM email_deliveries e JOIN runs r ON r.id = e.run_id JOIN leads l ON l.id = r.lead_id
    LEFT JOIN users u ON u.id = e.sender_user_id LEFT JOIN run_steps st ON st.run_id = r.id AND st.node = 'STRATEGY'
    WHERE e.workspace_id = ${workspaceId}`.execute(db)).rows;
  const replies = await db.selectFrom('email_replies').select(['id', 'delivery_id', 'received_at', 'classification'])
    .where('workspace_id', '=', workspaceId).execute();
  const byDelivery = Map.groupBy(replies, (r) => r.delivery_id);
  return deliveries.filter((d) => d.method === 'send').map((d) => ({
    deliveryId: d.id, runId: d.run_id, leadId: d.lead_id, status: d.status, method: d.method, deliveredAt: new Date(d.delivered_at),
    senderId: d.sender_user_id, sender: d.email, angle: d.angle, step: Number(d.touch), leadStatus: d.lead_status,
    replies: (byDelivery.get(d.id) ?? []).map((r) => ({ id: r.id, receivedAt: new Date(r.received_at), classification: r.classification })),
  }));
}

/** The first reply of a person to the e-mail, or null. */
const firstReply = (e: Raw) => {
  const personal = e.replies.filter((r) => !NOT_FROM_THE_PERSON.includes(r.classification)).map((r) => r.receivedAt.getTime());
  return personal.length === 0 ? null : Math.min(...personal);
};

/** outreach_outcomes holds exactly one row per e-mail, equal to the e-mail recounted from its raw rows. */
async function assertOutcomesTableAgrees(db: Kysely<DB>, workspaceId: string, raw: Raw[]): Promise<void> {
  const rows = await db.selectFrom('outreach_outcomes').selectAll().where('workspace_id', '=', workspaceId).execute();
  const stored = new Map(rows.map((o) => [o.delivery_id, {
    leadId: o.lead_id, sentAt: new Date(o.sent_at).getTime(), senderId: o.sender_user_id, angle: o.angle, step: Number(o.step),
    firstReplyAt: o.first_reply_at === null ? null : new Date(o.first_reply_at).getTime(),
    bounced: o.bounced, interested: o.interested, unsubscribed: o.unsubscribed,
  }]));
  assert.equal(stored.size, raw.length, 'one row per e-mail sent');
  for (const e of raw) {
    const classes = e.replies.map((r) => r.classification);
    assert.deepEqual(stored.get(e.deliveryId), {
      leadId: e.leadId, sentAt: e.deliveredAt.getTime(), senderId: e.senderId, angle: e.angle?.trim() || null, step: e.step,
      firstReplyAt: firstReply(e), bounced: e.status === 'BOUNCED' || classes.includes('bounce'),
      interested: classes.includes('interested'), unsubscribed: classes.includes('unsubscribe'),
    }, `e-mail ${e.deliveryId}`);
  }
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = (sorted.length - 1) / 2;
  return (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2;
}

/** The figures of a group of e-mails, one e-mail at a time. */
function figures(emails: Raw[]) {
  let bounced = 0; let replied = 0; let interested = 0; let unsubscribed = 0; let won = 0;
  const hours: number[] = [];
  for (const e of emails) {
    const classes = e.replies.map((r) => r.classification);
    if (e.status === 'BOUNCED' || classes.includes('bounce')) bounced += 1;
    const first = firstReply(e);
    if (first !== null) {
      replied += 1;
      hours.push(Math.max(first - e.deliveredAt.getTime(), 0) / 3_600_000);
    }
    if (classes.includes('interested')) interested += 1;
    if (classes.includes('unsubscribe')) unsubscribed += 1;
    if (e.leadStatus === 'WON') won += 1;
  }
  const delivered = emails.length - bounced;
  const mid = median(hours);
  return {
    sent: emails.length, delivered, bounced, replied, interested, unsubscribed, won,
    replyRate: delivered === 0 ? 0 : Math.round((replied / delivered) * 10_000) / 10_000,
    medianHoursToReply: mid === null ? null : Math.round(mid * 10) / 10,
  };
}

/** The Monday of the week `at` is in, on the wall clock of `timeZone`. */
const mondayOf = (at: Date, timeZone = 'UTC') => {
  const local = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  const day = new Date(`${local}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString().slice(0, 10);
};

/** Each week of the report equals the e-mails of that week recounted; answers the weeks. */
function assertWeeks(data: any[], raw: Raw[], timeZone: string): void {
  const weeks = Map.groupBy(raw, (e) => mondayOf(e.deliveredAt, timeZone));
  for (const { group, ...counted } of data) assert.deepEqual(counted, figures(weeks.get(group) ?? []), `week ${group}`);
  assert.equal(data.reduce((sum: number, r: any) => sum + r.sent, 0), raw.length, 'every e-mail in a week of the range');
}

for (const kind of BACKENDS) {
  describe(`outreach analytics (${kind})`, () => {
    let t: TestApp;
    let key: string;
    let workspaceId: string;
    let raw: Raw[];
    const clock = new ManualClock('2026-03-20T12:00:00Z');

    before(async () => {
      t = await startTestApp(kind, { clock });
      const [ws, other] = [await t.workspace('pro'), await t.workspace('pro')];
      workspaceId = ws.id;
      key = (await t.key(ws.id)).key;
      await seedOutreach(db(t), { workspaceId, emails: EMAILS, start: START, weeks: WEEKS });
      // Another workspace's e-mails, in the same weeks: none of them may count.
      await seedOutreach(db(t), { workspaceId: other.id, emails: 300, start: START, weeks: WEEKS });
      raw = await rawOf(db(t), workspaceId);
      assert.ok(raw.length > 2000 && raw.some((e) => e.replies.length > 1), 'thousands of e-mails, some answered twice');
      const classes = new Set(raw.flatMap((e) => e.replies.map((r) => r.classification)));
      assert.equal(classes.size, 9, `replies of every class: ${[...classes].join(', ')}`);
    });
    after(async () => { await t?.close(); });

    const report = async (query: string) => {
      const res = await t.api('GET', `/api/v1/analytics/outreach${query}`, { key });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      return res.json;
    };
    const range = '?from=2026-01-01&to=2026-03-31';

    it('counts each week from the raw rows, every week of the range shown, oldest first', async () => {
      await assertOutcomesTableAgrees(db(t), workspaceId, raw);
      const { data, from, to, timeZone } = await report(`${range}&groupBy=week`);
      assert.deepEqual([from, to, timeZone], ['2026-01-01', '2026-03-31', 'UTC']);
      assert.equal(data[0].group, '2025-12-29');
      assert.equal(data.length, 14);
      assertWeeks(data, raw, 'UTC');
      assert.ok(data.some((r: any) => r.sent === 0), 'a week without e-mails is shown at zero');
    });

    it('counts each sender, angle and sequence step from the raw rows', async () => {
      const bySender = Map.groupBy(raw, (e) => e.sender ?? 'No sender');
      const senders = (await report(`${range}&groupBy=sender`)).data;
      assert.equal(senders.length, 4);
      for (const { group, ...counted } of senders) assert.deepEqual(counted, figures(bySender.get(group)!), `sender ${group}`);

      const byAngle = Map.groupBy(raw, (e) => e.angle ?? 'No angle');
      const angles = (await report(`${range}&groupBy=angle`)).data;
      assert.deepEqual(angles.map((a: any) => a.group).sort(), [...SEEDED_ANGLES].sort());
      for (const { group, ...counted } of angles) assert.deepEqual(counted, figures(byAngle.get(group)!), `angle ${group}`);
      assert.ok(angles.every((a: any, i: number) => i === 0 || angles[i - 1].sent >= a.sent), 'most e-mails first');

      // The touch of the sequence each e-mail was: the first e-mail, its follow-ups.
      const byStep = Map.groupBy(raw, (e) => String(e.step));
      const steps = (await report(`${range}&groupBy=sequenceStep`)).data;
      assert.deepEqual(steps.map((s: any) => s.group), ['1', '2', '3']);
      for (const { group, ...counted } of steps) assert.deepEqual(counted, figures(byStep.get(group)!), `step ${group}`);
    });

    it('narrows to the days asked for, both included, and defaults to the last 12 weeks', async () => {
      const inRange = raw.filter((e) => e.deliveredAt >= new Date('2026-02-02T00:00:00Z') && e.deliveredAt < new Date('2026-02-09T00:00:00Z'));
      const { data } = await report('?from=2026-02-02&to=2026-02-08&groupBy=sequenceStep');
      const byStep = Map.groupBy(inRange, (e) => String(e.step));
      assert.deepEqual(data, ['1', '2', '3'].map((group) => ({ group, ...figures(byStep.get(group)!) })));
      // Today is Friday 2026-03-20: twelve Mondays, from 2025-12-29.
      const byDefault = await report('');
      assert.deepEqual([byDefault.from, byDefault.to, byDefault.data.length], ['2025-12-29', '2026-03-20', 12]);
    });

    it('refuses bad ranges and keys that may not read runs', async () => {
      assertInvalid(await t.api('GET', '/api/v1/analytics/outreach?from=2026-02-30', { key }), ['from']);
      assertInvalid(await t.api('GET', '/api/v1/analytics/outreach?from=2026-03-02&to=2026-03-01', { key }), ['from']);
      assertInvalid(await t.api('GET', '/api/v1/analytics/outreach?from=2020-01-01&to=2026-01-01', { key }), ['from']);
      assertInvalid(await t.api('GET', '/api/v1/analytics/outreach?groupBy=day', { key }), ['groupBy']);
      const leadsOnly = (await t.key(workspaceId, ['leads:read'])).key;
      assertProblem(await t.api('GET', '/api/v1/analytics/outreach', { key: leadsOnly }), 403);
    });

    it("counts weeks and days in the workspace's time zone, across its daylight-saving switch", async () => {
      const zone = 'America/New_York';
      const zoned = await t.workspace('pro');
      await changeSendingSettings(db(t), zoned.id, { timeZone: zone }, null, clock);
      await seedOutreach(db(t), { workspaceId: zoned.id, emails: 700, start: START, weeks: WEEKS });
      const zonedKey = (await t.key(zoned.id)).key;
      const zonedRaw = await rawOf(db(t), zoned.id);
      // Sent early on a Monday in UTC: still Sunday in New York, so in the week before.
      assert.ok(zonedRaw.some((e) => mondayOf(e.deliveredAt, zone) !== mondayOf(e.deliveredAt)), 'some e-mails change week with the zone');
      await assertOutcomesTableAgrees(db(t), zoned.id, zonedRaw);

      const weeks = await t.api('GET', `/api/v1/analytics/outreach${range}&groupBy=week`, { key: zonedKey });
      assert.equal(weeks.json.timeZone, zone);
      assertWeeks(weeks.json.data, zonedRaw, zone);
      // The day of the switch (EST to EDT on 2026-03-08) and the day after: each from midnight to midnight there.
      for (const day of ['2026-03-08', '2026-03-09']) {
        const { data } = (await t.api('GET', `/api/v1/analytics/outreach?from=${day}&to=${day}&groupBy=angle`, { key: zonedKey })).json;
        const sent = zonedRaw.filter((e) => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(e.deliveredAt) === day);
        assert.ok(sent.length > 0);
        assert.equal(data.reduce((sum: number, r: any) => sum + r.sent, 0), sent.length, `the e-mails of ${day} in ${zone}`);
      }
    });

    it('keeps the outcomes table equal to the raw rows after a reply, corrections by a person, a bounce and an erasure', async () => {
      const before = await rawOf(db(t), workspaceId);
      const used = new Set<string>();
      /** A reply of that class to a delivered e-mail not picked yet. */
      const replyOf = (classification: string) => {
        const e = before.find((x) => x.status === 'DELIVERED' && !used.has(x.deliveryId) && x.replies.some((r) => r.classification === classification))!;
        used.add(e.deliveryId);
        return e.replies.find((r) => r.classification === classification)!;
      };
      const [answered, bounced] = before.filter((e) => e.status === 'DELIVERED' && e.replies.length === 0);
      // A new reply, as the reply check stores it.
      await db(t).insertInto('email_replies').values({
        id: randomUUID(), workspace_id: workspaceId, delivery_id: answered!.deliveryId, run_id: answered!.runId, message_id: '<new@lead.example>',
        from_address: 'lead@bench.example', subject: 'Re: A pilot', snippet: 'Yes, Tuesday works.',
        received_at: new Date(answered!.deliveredAt.getTime() + 5 * 3_600_000), found_at: clock.now(), classification: 'interested', classified_by: 'engine',
      }).execute();
      // "Mark as…": an interested reply was an absence, an absence was an unsubscribe, a bounce was a person's answer.
      const marks = [[replyOf('interested'), 'out_of_office'], [replyOf('out_of_office'), 'unsubscribe'], [replyOf('bounce'), 'other']] as const;
      for (const [reply, classification] of marks) {
        const res = await t.api('POST', `/api/v1/replies/${reply.id}/classification`, { key, body: { classification } });
        assert.equal(res.status, 200, JSON.stringify(res.json));
      }
      await db(t).transaction().execute((trx) => recordBounce(trx, {
        workspaceId, runId: bounced!.runId, deliveryId: bounced!.deliveryId, email: 'lead@bench.example', error: '550 5.1.1', source: 'dsn', at: clock.now(),
      }));
      // The lead of an answered e-mail is erased with its runs, their deliveries and replies.
      const erased = before.find((e) => e.replies.length > 1)!.leadId;
      assert.equal((await t.api('DELETE', `/api/v1/leads/${erased}`, { key })).status, 204);

      const now = await rawOf(db(t), workspaceId);
      assert.ok(now.length < before.length && !now.some((e) => e.leadId === erased), "the erased lead's e-mails are gone");
      assert.equal(now.find((e) => e.deliveryId === bounced!.deliveryId)!.status, 'BOUNCED');
      await assertOutcomesTableAgrees(db(t), workspaceId, now);
      assertWeeks((await report(`${range}&groupBy=week`)).data, now, 'UTC');
      const byStep = Map.groupBy(now, (e) => String(e.step));
      for (const { group, ...counted } of (await report(`${range}&groupBy=sequenceStep`)).data) {
        assert.deepEqual(counted, figures(byStep.get(group)!), `step ${group}`);
      }
    });
  });

  describe(`migration 0057 (${kind})`, () => {
    it('counts the e-mails sent before it', async () => {
      const test = await createTestDatabase(kind);
      try {
        const { db: migrated } = test.database;
        // Back to before 0057, with e-mails sent and answered there.
        await sql`DROP TABLE outreach_outcomes`.execute(migrated);
        await sql`DROP FUNCTION leadrun_count_changed_outcomes() CASCADE`.execute(migrated);
        await sql`DROP FUNCTION leadrun_count_outcomes(uuid[])`.execute(migrated);
        await sql`DELETE FROM schema_migrations WHERE version = 57`.execute(migrated);
        const workspaceId = randomUUID();
        await sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES (${workspaceId}, 'Before outcomes', 'PRO', now())`.execute(migrated);
        await seedOutreach(migrated, { workspaceId, emails: 400, start: START, weeks: WEEKS });

        await test.database.migrate();
        const sent = await rawOf(migrated, workspaceId);
        assert.ok(sent.length > 350 && sent.some((e) => e.replies.length > 0));
        await assertOutcomesTableAgrees(migrated, workspaceId, sent);
      } finally {
        await test.drop();
      }
    });
  });
}
