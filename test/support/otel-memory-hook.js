// Test-only hook, preloaded into the built api or worker (`node -r`) by test/traces.e2e-spec.ts.
// It calls the processes' own startTracing first, with an InMemorySpanExporter in place of
// OTLP/HTTP (the process's own bootstrap then finds tracing started and does nothing more), and
// answers the parent's 'spans' message over IPC with what was recorded, whether tracing started,
// and whether any OpenTelemetry SDK or instrumentation module was loaded at all.
const path = require('node:path');

const which = /apps[\\/](api|worker)[\\/]/.exec(process.argv[1] ?? '')?.[1];
if (!which) throw new Error(`otel-memory-hook: not the api or the worker: ${process.argv[1]}`);
const { startTracing } = require(path.join(__dirname, '../../dist/libs/kernel/telemetry'));

let exporter;
const tracing = startTracing(which, {
  exporter: () => {
    const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
    return (exporter = new InMemorySpanExporter());
  },
});

const plain = (span) => ({
  name: span.name,
  kind: span.kind,
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parentSpanId: span.parentSpanContext?.spanId ?? null,
  scope: span.instrumentationScope.name,
  service: span.resource.attributes['service.name'],
  attributes: span.attributes,
  links: span.links.length,
});

process.on('message', (message) => {
  if (message !== 'spans') return;
  process.send({
    started: tracing !== null,
    serviceName: tracing?.serviceName ?? null,
    sdkLoaded: Object.keys(require.cache).some((file) => /@opentelemetry[\\/](sdk-|instrumentation|exporter-)/.test(file)),
    spans: exporter ? exporter.getFinishedSpans().map(plain) : [],
  });
});
process.channel?.unref();
