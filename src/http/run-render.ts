// A run as the API answers it: the domain's Run, with its trace id turned into the URL where its trace is seen.
import type { Config } from '../config.ts';
import type { Run } from '../domain/runs/runs.ts';

export function traceUrlOf(config: Pick<Config, 'traceUrlTemplate' | 'publicUrl'>, runId: string, traceId: string): string {
  return config.traceUrlTemplate
    ? config.traceUrlTemplate.replaceAll('{traceId}', traceId).replaceAll('{runId}', runId)
    : `${config.publicUrl}/runs/${runId}/trace`;
}

export function renderRun(config: Pick<Config, 'traceUrlTemplate' | 'publicUrl'>, run: Run) {
  const { traceId, ...rest } = run;
  return { ...rest, traceUrl: traceUrlOf(config, run.id, traceId) };
}
