// The runs table as a job source (DESIGN §2): the run row is the job, claimed, leased and released by the statements
// in sql/run/, one a file; handlers/run.ts works it. Every write after the claim checks the lease and records the
// run's events through its lifecycle (src/domain/runs/lifecycle.ts).
import { claimableRuns, RUNS_CHANNEL } from '../domain/runs/lifecycle.ts';
import { claimNextRun, type ClaimedRun, type ClaimStart } from './sql/run/claimRun.ts';
import { releaseRun } from './sql/run/releaseRun.ts';
import { renewLease } from './sql/run/renewRunLease.ts';
import { runStats } from './sql/run/runStats.ts';
import type { JobSource } from './types.ts';

/**
 * The runs table as the job source of kind `run`: the run row is the job (DESIGN §2). A notice holds a run's id, or
 * how many runs a batch queued, and wakes that many slots. Its claim also starts the run's first step to work.
 */
export function runSource(start: ClaimStart): JobSource<ClaimedRun> {
  return {
    channel: RUNS_CHANNEL,
    wakes: (payload) => claimableRuns(payload),
    claim: (db, _kind, owner, now, leaseMs) => claimNextRun(db, owner, now, leaseMs, start),
    renew: renewLease,
    release: releaseRun,
    stats: runStats,
  };
}
