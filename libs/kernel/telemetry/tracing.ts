import { AppConfig } from '@kernel/config';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { markTracing } from './trace-context';

/** The processes that trace, and their default `service.name` (OTEL_SERVICE_NAME overrides it). */
export const SERVICE_NAMES = { api: 'integrations-api', worker: 'integrations-worker' } as const;
export type TracedProcess = keyof typeof SERVICE_NAMES;

export interface TracingOptions {
  /** The settings (default: AppConfig.fromEnv(), as the process's own start reads them). */
  config?: AppConfig;
  /**
   * Makes the exporter instead of OTLP/HTTP, called only when tracing starts (tests hand in an
   * InMemorySpanExporter; spans then go to it one by one instead of in batches).
   */
  exporter?: () => SpanExporter;
}

export interface Tracing {
  serviceName: string;
  /** Exports what is still buffered and stops the SDK. */
  shutdown(): Promise<void>;
}

let started: Tracing | null | undefined;

/** Paths polled all day (health probes, Prometheus scrapes); their requests are not traced. */
export const UNTRACED_PATHS = /^\/(health|metrics)(\/|$|\?)/;

/**
 * Starts the OpenTelemetry SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set, and does nothing else
 * otherwise: the SDK's modules are not even loaded (they are required here, only on that path).
 * Must run before the instrumented modules (http, express, pg, ioredis, undici) are loaded, so
 * each process's main.ts imports its bootstrap (`./tracing`) first. A second call answers the first's result.
 */
export function startTracing(process: TracedProcess, options: TracingOptions = {}): Tracing | null {
  if (started !== undefined) return started;
  const config = options.config ?? AppConfig.fromEnv();
  const endpoint = config.traces.endpoint;
  if (!endpoint) return (started = null);
  const serviceName = config.traces.serviceName ?? SERVICE_NAMES[process];

  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on (see above) */
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, SimpleSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  /* eslint-enable @typescript-eslint/no-require-imports */

  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter())
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [processor],
    // Every trace is recorded: a caller's `traceparent` is continued, but its "not sampled" flag cannot switch our tracing off.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler(), remoteParentNotSampled: new AlwaysOnSampler() }),
  });
  // The global tracer provider, the W3C trace-context (and baggage) propagator, an AsyncLocalStorage context manager.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.test(req.url ?? ''),
        // Outgoing node:http requests only as part of a trace (the OTLP exporter's own are suppressed by it).
        requireParentforOutgoingSpans: true,
      }),
      // Route templates for the HTTP span (`http.route`) and a span per route handler; middleware layers would be noise.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      // Only inside a trace: the relay's and the schedules' polling would otherwise start a trace every second.
      // Statements are recorded with their $n placeholders; parameter values never are.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      // Likewise: BullMQ's blocking fetches and lock renewals outside a job are not traced.
      new IORedisInstrumentation({ requireParentSpan: true }),
      // The webhook POSTs (undici.request through our pinned Agent).
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  markTracing(true);
  return (started = {
    serviceName,
    shutdown: async () => {
      markTracing(false);
      await provider.shutdown();
    },
  });
}

/** Flushes and stops the SDK if it was started (the application's shutdown calls it). */
export async function stopTracing(): Promise<void> {
  if (started) await started.shutdown();
}
