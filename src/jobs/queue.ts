// The `jobs` table as the source of every kind that keeps its jobs there (0013_delivery.sql): its statements, one a
// file in sql/ as graphile/worker keeps them. Every write after the claim names the runner that holds the lease, so a
// runner that lost a job (it stalled and another took over, or the job was erased) can never overwrite what happened
// since.
import { JOBS_CHANNEL } from './sql/enqueueJob.ts';
import { claimJob } from './sql/claimJob.ts';
import { jobStats } from './sql/jobStats.ts';
import { releaseJob } from './sql/releaseJob.ts';
import { renewJobLease } from './sql/renewJobLease.ts';
import type { ClaimedJob, JobSource } from './types.ts';

/** The `jobs` table as the source of every kind that keeps its jobs there: a notice names the kind that became due. */
export const jobsTable: JobSource<ClaimedJob> = {
  channel: JOBS_CHANNEL,
  wakes: (payload, kind) => (payload === kind ? 1 : 0),
  claim: claimJob,
  renew: renewJobLease,
  release: releaseJob,
  stats: jobStats,
};
