// Loaded first by main.ts, before Nest and the modules it instruments (http, express, pg, ioredis,
// undici). With OTEL_EXPORTER_OTLP_ENDPOINT unset it does nothing and loads no SDK.
import { startTracing } from '@kernel/telemetry';

try {
  startTracing('worker');
} catch {
  // A configuration error: main() reads the configuration again and reports it properly.
}
