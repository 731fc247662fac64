// The claim of `webhook.deliver` jobs (issue 38): fair between workspaces and endpoints, where the `jobs` table's own
// claim is first in first out. Each delivery's job runs in its endpoint's lane (jobs.lane). A claim takes the lane
// of the least recently served workspace, and in it the least recently served endpoint, that has a due job, fewer than
// two jobs in flight, and is not put off for timing out (deliver.ts); then that lane's oldest due job. A workspace
// holds at most all but one of a runner's slots, so that one is always free for the others' deliveries. So an
// endpoint that never answers holds at most two delivery slots, for one timeout each until it is put off, and another
// workspace's endpoint is served next, at once, whatever is queued before it. A disabled endpoint's lane is neither
// capped nor put off: its deliveries are only marked FAILED, without a request.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.ts';
import {
  claimedBy, claimedColumns, claimedJobOf, claimOldestDue, dueJob, type ClaimedJobRow,
} from '../../jobs/sql/claimJob.ts';
import type { ClaimedJob } from '../../jobs/types.ts';
import { WEBHOOK_DELIVER } from './events.ts';

// Written into the statements, not sent as a value: the partial indexes on jobs name the kind.
const KIND = sql.lit(WEBHOOK_DELIVER);

/** Deliveries to one endpoint in flight at once, over every worker process. */
export const ENDPOINT_CONCURRENCY = 2;

export interface ClaimLimits {
  /** Deliveries to one endpoint in flight at once, over every worker process. */
  endpoint: number;
  /** Deliveries of one workspace that one runner (the claim's owner) works at once. */
  workspacePerRunner: number;
}

/**
 * Takes a due delivery job fairly, or null. Several runners may claim at once: the endpoint's row is locked with
 * SKIP LOCKED, so that two claims at the same moment take two endpoints rather than one endpoint twice, and the job's
 * row likewise, so that no job is taken twice. The workspace's share of the runner is exact only when the runner
 * makes one claim at a time (webhookHandler does).
 */
export async function claimWebhookDelivery(
  db: Kysely<DB>, owner: string, now: Date, leaseMs: number, limits: ClaimLimits,
): Promise<ClaimedJob | null> {
  const laneless = await claimLaneless(db, owner, now, leaseMs);
  if (laneless) return laneless;
  // A claim that lost the race for an endpoint's last place looks again: by then it sees the other claim's job.
  for (let tries = 0; tries < 3; tries++) {
    const outcome = await db.transaction().execute(async (trx) => {
      const endpoint = await lockNextEndpoint(trx, owner, now, limits);
      return endpoint ? (await claimInLane(trx, endpoint, owner, now, leaseMs, limits.endpoint)) ?? 'lost' : 'none';
    });
    if (outcome === 'none') return null;
    if (outcome !== 'lost') return outcome;
  }
  return null;
}

interface LockedEndpoint {
  id: string;
  lane: string;
  enabled: boolean;
}

/**
 * The endpoint to serve next, locked until the claim commits: of those with a due delivery, fewer in flight than
 * their limit, whose workspace has fewer than its share of this runner's, and not put off, the least recently served
 * workspace's least recently served endpoint.
 */
async function lockNextEndpoint(
  trx: Kysely<DB>, owner: string, now: Date, limits: ClaimLimits,
): Promise<LockedEndpoint | undefined> {
  // `lanes` skips from one lane with live jobs to the next in jobs_lane_due (a loose index scan): its cost grows with
  // the endpoints that have deliveries waiting, not with the deliveries. A workspace's last service is read from its
  // enabled endpoints, so that the look-up uses webhook_endpoints_workspace.
  const { rows: [row] } = await sql<LockedEndpoint>`
    WITH RECURSIVE lanes (lane) AS (
      (SELECT lane FROM jobs WHERE kind = ${KIND} AND status IN ('QUEUED', 'RUNNING') AND lane IS NOT NULL
       ORDER BY lane LIMIT 1)
      UNION ALL
      SELECT (SELECT j.lane FROM jobs j
              WHERE j.kind = ${KIND} AND j.status IN ('QUEUED', 'RUNNING') AND j.lane IS NOT NULL AND j.lane > l.lane
              ORDER BY j.lane LIMIT 1)
      FROM lanes l WHERE l.lane IS NOT NULL
    )
    SELECT p.id, l.lane, p.enabled FROM lanes l JOIN webhook_endpoints p ON p.id = l.lane::uuid
    WHERE EXISTS (SELECT 1 FROM jobs d WHERE d.kind = ${KIND} AND d.lane = l.lane AND ${dueJob(now, 'd')})
      AND (NOT p.enabled OR (
        (p.put_off_until IS NULL OR p.put_off_until <= ${now}::timestamptz)
        AND ${inFlight(sql`l.lane`, now)} < ${limits.endpoint}
        AND (SELECT count(*) FROM jobs w
             WHERE w.kind = ${KIND} AND w.status = 'RUNNING' AND w.lane IS NOT NULL AND w.lease_owner = ${owner}
               AND w.workspace_id = p.workspace_id AND w.lease_expires_at >= ${now}::timestamptz)
            < ${limits.workspacePerRunner}))
    ORDER BY (SELECT max(s.served_at) FROM webhook_endpoints s
              WHERE s.workspace_id = p.workspace_id AND s.enabled) NULLS FIRST,
             p.served_at NULLS FIRST, p.id
    LIMIT 1
    FOR UPDATE OF p SKIP LOCKED`.execute(trx);
  return row;
}

/** A lane's jobs in flight: running under a lease that has not run out. */
const inFlight = (lane: RawBuilder<unknown>, now: Date) => sql`(SELECT count(*) FROM jobs r
  WHERE r.kind = ${KIND} AND r.lane = ${lane} AND r.status = 'RUNNING' AND r.lane IS NOT NULL
    AND r.lease_expires_at >= ${now}::timestamptz)`;

/**
 * The locked endpoint's oldest due delivery job, claimed, and the endpoint marked served. The cap is counted again:
 * this statement's snapshot is taken after the endpoint's lock was granted, so it sees the job of every claim on the
 * endpoint that held the lock before, which the first statement's may not have.
 */
async function claimInLane(
  trx: Kysely<DB>, endpoint: LockedEndpoint, owner: string, now: Date, leaseMs: number, cap: number,
): Promise<ClaimedJob | null> {
  const { rows: [row] } = await sql<ClaimedJobRow>`
    WITH job AS (
      SELECT j.id FROM jobs j
      WHERE j.kind = ${KIND} AND j.lane = ${endpoint.lane} AND ${dueJob(now, 'j')}
        AND (${!endpoint.enabled}::boolean OR ${inFlight(sql`${endpoint.lane}`, now)} < ${cap})
      ORDER BY j.available_at, j.created_at
      LIMIT 1
      FOR UPDATE OF j SKIP LOCKED
    ),
    served AS (
      UPDATE webhook_endpoints SET served_at = ${now}::timestamptz
      WHERE id = ${endpoint.id} AND EXISTS (SELECT 1 FROM job)
    )
    UPDATE jobs SET ${claimedBy(owner, now, leaseMs)}
    WHERE id = (SELECT id FROM job)
    RETURNING ${claimedColumns}`.execute(trx);
  return row ? claimedJobOf(row) : null;
}

/**
 * A delivery job written without a lane, by a process of the version before lanes while this one migrated: taken
 * first in first out from a partial index that is empty once those are gone, so that none is left behind.
 */
function claimLaneless(db: Kysely<DB>, owner: string, now: Date, leaseMs: number): Promise<ClaimedJob | null> {
  return claimOldestDue(db, sql`kind = ${KIND} AND lane IS NULL`, owner, now, leaseMs);
}
