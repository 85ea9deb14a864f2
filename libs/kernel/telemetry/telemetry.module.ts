import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { stopTracing } from './tracing';

/** Exports the spans still buffered when the application closes (nothing to do when tracing is off). */
@Injectable()
class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing().catch(() => undefined);
  }
}

@Module({ providers: [TracingShutdown] })
export class TelemetryModule {}
