// How long a run's pipeline took: the time its steps ran, each from its start to its end (retries included),
// added up. The wait in the queue, between steps and for a person's review is not counted, so a draft written
// again an hour after the first reads as the seconds its steps took. It imports nothing, so that Node's tests
// can load it as it is.

/** What the sum needs of a step. */
export interface TimedStep {
  startedAt: string | null;
  completedAt: string | null;
}

/** Milliseconds the steps ran, or null when no step has both started and ended. */
export function pipelineMs(steps: readonly TimedStep[]): number | null {
  let total = 0;
  let timed = 0;
  for (const step of steps) {
    if (!step.startedAt || !step.completedAt) continue;
    total += Math.max(0, Date.parse(step.completedAt) - Date.parse(step.startedAt));
    timed++;
  }
  return timed > 0 ? total : null;
}

/** What a person reads as "Pipeline time" explained. */
export const PIPELINE_TIME_HELP = 'The time the steps ran; waiting in the queue or for review is not counted.';
