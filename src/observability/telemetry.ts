// OpenTelemetry traces of runs, sent over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it the API's
// no-op tracer makes every span free. Every span of a run carries the run's own trace id (runs.trace_id), so the
// `traceUrl` built from TRACE_URL_TEMPLATE's {traceId} opens that run's trace. Model calls follow the GenAI
// semantic conventions (gen_ai.*).
import { createHash } from 'node:crypto';
import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span } from '@opentelemetry/api';
import type { EngineName, EngineResult } from '../agent/engine.ts';

const TRACER = 'leadrun';

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts exporting spans to `endpoint` (an OTLP/HTTP base address such as http://collector:4318). The SDK and its
 * exporter are loaded only then: a process that exports nothing does not hold them in memory.
 */
export async function startTelemetry(endpoint: string | null, serviceName = 'leadrun'): Promise<Telemetry> {
  if (!endpoint) return { shutdown: async () => {} };
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/resources'), import('@opentelemetry/sdk-trace-node'),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }))],
  });
  provider.register();
  return {
    shutdown: async () => {
      await provider.forceFlush().catch(() => {});
      await provider.shutdown().catch(() => {});
      trace.disable();
    },
  };
}

/** The context every span of a run hangs under: the run's trace id, and a parent span id derived from the run. */
function runTraceContext(traceId: string, runId: string): Context {
  const spanId = createHash('sha256').update(runId).digest('hex').slice(0, 16);
  return trace.setSpanContext(context.active(), { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

export interface StepTraceInfo {
  traceId: string;
  runId: string;
  workspaceId: string;
  node: string;
  attempt: number;
  engine: EngineName;
  /** The configured model, for the request attributes of a model call. */
  requestModel: string | null;
}

/**
 * Runs one attempt at a step inside a `leadrun.step {node}` span. When a model answered, a `chat {model}` client
 * span under it records the call with the GenAI attributes (model, token usage).
 */
export async function traceStep<T extends EngineResult<object>>(info: StepTraceInfo, attempt: () => Promise<T>): Promise<T> {
  const tracer = trace.getTracer(TRACER);
  const began = Date.now();
  return tracer.startActiveSpan(`leadrun.step ${info.node}`, {
    attributes: {
      'leadrun.run.id': info.runId,
      'leadrun.workspace.id': info.workspaceId,
      'leadrun.step.node': info.node,
      'leadrun.step.attempt': info.attempt,
      'leadrun.engine': info.engine,
    },
  }, runTraceContext(info.traceId, info.runId), async (span) => {
    try {
      const result = await attempt();
      if (info.engine === 'model') recordModelCall(span, info, began, result);
      span.setAttribute('leadrun.prompt.version', result.promptVersion);
      return result;
    } catch (error) {
      if (info.engine === 'model') recordModelCall(span, info, began, null, error);
      span.recordException(error instanceof Error ? error : new Error(String(error)));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

function recordModelCall(parent: Span, info: StepTraceInfo, began: number, result: EngineResult<object> | null, error?: unknown): void {
  const model = result?.model ?? info.requestModel ?? 'unknown';
  const span = trace.getTracer(TRACER).startSpan(`chat ${model}`, {
    kind: SpanKind.CLIENT,
    startTime: began,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      ...(info.requestModel ? { 'gen_ai.request.model': info.requestModel } : {}),
      ...(result?.model ? { 'gen_ai.response.model': result.model } : {}),
      ...(result?.usage ? { 'gen_ai.usage.input_tokens': result.usage.inputTokens, 'gen_ai.usage.output_tokens': result.usage.outputTokens } : {}),
      'leadrun.prompt.version': result?.promptVersion ?? '',
    },
  }, trace.setSpan(context.active(), parent));
  if (error !== undefined) {
    span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}
