import { context, Context, propagation, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * The W3C trace context of a span, as carried across processes and time: in an outbox row, a
 * delivery row and a job. Both null when tracing is off or nothing is being traced.
 */
export interface TraceContext {
  traceparent: string | null;
  tracestate: string | null;
}

const NONE: TraceContext = { traceparent: null, tracestate: null };

/** The name every span this code starts itself is recorded under (instrumentations use their own). */
export const TRACER_NAME = 'integrations';

let tracing = false;

/** Set once by startTracing; every helper below is a plain pass-through while it is false. */
export function markTracing(on: boolean): void {
  tracing = on;
}

/** Whether this process started the OpenTelemetry SDK (OTEL_EXPORTER_OTLP_ENDPOINT set). */
export function isTracing(): boolean {
  return tracing;
}

/** The active span's trace context (with the W3C propagator the SDK registers); nulls when there is none. */
export function currentTraceContext(ctx: Context = context.active()): TraceContext {
  if (!tracing || !trace.getSpan(ctx)) return NONE;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return { traceparent: carrier.traceparent ?? null, tracestate: carrier.tracestate ?? null };
}

/** The context whose parent is the given trace context (the active one when it carries none). */
export function contextFrom(carried: TraceContext | null | undefined): Context {
  if (!carried?.traceparent) return context.active();
  const carrier: Record<string, string> = { traceparent: carried.traceparent };
  if (carried.tracestate) carrier.tracestate = carried.tracestate;
  return propagation.extract(context.active(), carrier);
}

/**
 * BullMQ's job telemetry metadata (what bullmq-otel writes into `opts.telemetry.metadata`: the
 * propagation carrier as JSON), so a job queued on behalf of an event continues the event's trace.
 */
export function bullMetadata(carried: TraceContext | null | undefined): string | undefined {
  if (!carried?.traceparent) return undefined;
  return JSON.stringify(carried.tracestate ? { traceparent: carried.traceparent, tracestate: carried.tracestate } : { traceparent: carried.traceparent });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Record<string, string | number | boolean>;
  /** The parent, when it is not the active context (a context carried in a row or a job). */
  parent?: TraceContext | null;
  startTime?: number;
}

/**
 * Runs `fn` inside a new active span (ended when `fn` settles; an error is recorded on it and
 * rethrown). With tracing off it only calls `fn`: no span, no context switch.
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!tracing) return fn(undefined);
  const parent = options.parent ? contextFrom(options.parent) : context.active();
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, startTime: options.startTime }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** Runs `fn` with a carried context as the active one (a pass-through with tracing off or nothing carried). */
export function inContext<T>(carried: TraceContext | null | undefined, fn: () => T): T {
  if (!tracing || !carried?.traceparent) return fn();
  return context.with(contextFrom(carried), fn);
}

/** Starts a span (not made active) under a carried context, and answers it with the context its children should carry. */
export function startChildSpan(name: string, options: SpanOptions): { span: Span; carried: TraceContext } | undefined {
  if (!tracing) return undefined;
  const parent = contextFrom(options.parent);
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, startTime: options.startTime }, parent);
  return { span, carried: currentTraceContext(trace.setSpan(parent, span)) };
}

export { SpanKind };
