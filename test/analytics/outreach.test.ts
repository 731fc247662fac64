// GET /api/v1/analytics/outreach (DESIGN §16), on both backends, over thousands of seeded e-mails and replies: every
// figure of every group (week, sender, angle, sequence step) is recomputed here from the raw rows, one e-mail at a
// time, and must equal the endpoint's; a range narrows it, weeks without e-mails show at zero, another workspace's
// rows never count, bad ranges are 400 and a key without runs:read is 403.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { seedOutreach, SEEDED_ANGLES } from '../../bench/analytics-seed.ts';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, db } from '../http/support.ts';

const START = new Date('2026-01-05T08:00:00Z');
const WEEKS = 10;
const EMAILS = 2400;
const NOT_FROM_THE_PERSON = ['out_of_office', 'auto_reply', 'bounce'];

interface Raw {
  deliveryId: string; status: string; method: string; deliveredAt: Date; sender: string | null; angle: string | null;
  leadStatus: string; replies: Array<{ receivedAt: Date; classification: string }>;
}

/** Every e-mail of the workspace as stored, with its replies: what the figures are recomputed from. */
async function rawOf(t: TestApp, workspaceId: string): Promise<Raw[]> {
  const deliveries = (await sql<{ id: string; status: string; method: string; delivered_at: Date; email: string | null; angle: string | null; lead_status: string }>`
    SELECT e.id, e.status, e.method, e.delivered_at, u.email, st.output->>'angle' AS angle, l.status AS lead_status
    FROM email_deliveries e JOIN runs r ON r.id = e.run_id JOIN leads l ON l.id = r.lead_id
    LEFT JOIN users u ON u.id = e.sender_user_id LEFT JOIN run_steps st ON st.run_id = r.id AND st.node = 'STRATEGY'
    WHERE e.workspace_id = ${workspaceId}`.execute(db(t))).rows;
  const replies = await db(t).selectFrom('email_replies').select(['delivery_id', 'received_at', 'classification'])
    .where('workspace_id', '=', workspaceId).execute();
  const byDelivery = Map.groupBy(replies, (r) => r.delivery_id);
  return deliveries.map((d) => ({
    deliveryId: d.id, status: d.status, method: d.method, deliveredAt: new Date(d.delivered_at), sender: d.email, angle: d.angle,
    leadStatus: d.lead_status,
    replies: (byDelivery.get(d.id) ?? []).map((r) => ({ receivedAt: new Date(r.received_at), classification: r.classification })),
  }));
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
    const personal = e.replies.filter((r) => !NOT_FROM_THE_PERSON.includes(r.classification));
    if (personal.length > 0) {
      replied += 1;
      const first = Math.min(...personal.map((r) => r.receivedAt.getTime()));
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

const mondayOf = (at: Date) => {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString().slice(0, 10);
};

for (const kind of BACKENDS) {
  describe(`outreach analytics (${kind})`, () => {
    let t: TestApp;
    let key: string;
    let workspaceId: string;
    let raw: Raw[];

    before(async () => {
      t = await startTestApp(kind, { clock: new ManualClock('2026-03-20T12:00:00Z') });
      const [ws, other] = [await t.workspace('pro'), await t.workspace('pro')];
      workspaceId = ws.id;
      key = (await t.key(ws.id)).key;
      await seedOutreach(db(t), { workspaceId, emails: EMAILS, start: START, weeks: WEEKS });
      // Another workspace's e-mails, in the same weeks: none of them may count.
      await seedOutreach(db(t), { workspaceId: other.id, emails: 300, start: START, weeks: WEEKS });
      raw = (await rawOf(t, workspaceId)).filter((e) => e.method === 'send');
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
      const { data, from, to, timeZone } = await report(`${range}&groupBy=week`);
      assert.deepEqual([from, to, timeZone], ['2026-01-01', '2026-03-31', 'UTC']);
      const weeks = Map.groupBy(raw, (e) => mondayOf(e.deliveredAt));
      assert.equal(data[0].group, '2025-12-29');
      assert.equal(data.length, 14);
      for (const row of data) {
        const { group, ...counted } = row;
        assert.deepEqual(counted, figures(weeks.get(group) ?? []), `week ${group}`);
      }
      assert.equal(data.reduce((sum: number, r: any) => sum + r.sent, 0), raw.length);
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

      const steps = (await report(`${range}&groupBy=sequenceStep`)).data;
      assert.deepEqual(steps, [{ group: '1', ...figures(raw) }]);
    });

    it('narrows to the days asked for, both included, and defaults to the last 12 weeks', async () => {
      const inRange = raw.filter((e) => e.deliveredAt >= new Date('2026-02-02T00:00:00Z') && e.deliveredAt < new Date('2026-02-09T00:00:00Z'));
      const { data } = await report('?from=2026-02-02&to=2026-02-08&groupBy=sequenceStep');
      assert.deepEqual(data, [{ group: '1', ...figures(inRange) }]);
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
  });
}
