import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export const TRACER_NAME = 'dataagent';

/**
 * Starts exporting traces over OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; headers come from OTEL_EXPORTER_OTLP_HEADERS (the
 * exporter reads the standard variables). Unset: nothing is registered, every span is the API's
 * no-op, and nothing is exported.
 * @returns a function that flushes and stops the exporter, or null when tracing is off.
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<(() => Promise<void>) | null> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  // Loaded only when traces go out: a process that exports none starts without it.
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName }),
    // OTEL_BSP_SCHEDULE_DELAY: how often batches go out (ms), 5 s by default.
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY) || 5_000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return async () => {
    await provider.shutdown().catch(() => undefined);
  };
}

/** The W3C `traceparent` of a span, for carrying the trace across the queue; undefined when tracing is off. */
export function traceparentOf(span: Span): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` names (the root context when there is none). */
export function contextFrom(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/** Starts a span under `parent` (a context, explicitly: runs are async generators, where the active context is not reliable). */
export function startSpan(name: string, parent: Context, attributes: Attributes = {}, kind: SpanKind = SpanKind.INTERNAL, startTime?: Date): Span {
  return trace.getTracer(TRACER_NAME).startSpan(name, { kind, attributes, ...(startTime ? { startTime } : {}) }, parent);
}

/** Ends a span with an error status and the message (never a stack or a payload). */
export function endWithError(span: Span, message: string, endTime?: Date): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 500) });
  span.end(endTime);
}

export { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span };
