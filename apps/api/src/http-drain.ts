import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '@kernel/config';
import type { Server } from 'node:https';

/**
 * Stops taking connections and lets requests in flight finish before anything they use closes:
 * Nest closes the HTTP server only after the shutdown hooks (where the database pool and Redis
 * close), so without this a request caught by SIGTERM would fail half-way. Idle keep-alive
 * connections close at once; busy ones close when their answer is sent, or at the grace limit.
 */
@Injectable()
export class HttpDrain implements BeforeApplicationShutdown {
  private readonly logger = new Logger(HttpDrain.name);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: AppConfig,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server?.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // Busy connections get `Connection: close` on their answer; a straggler is cut at the grace limit.
    const limit = setTimeout(() => server.closeAllConnections(), Math.max(1000, this.config.shutdownGraceMs - 2000));
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    await closed;
    clearTimeout(limit);
    clearInterval(idle);
    this.logger.log('stopped taking requests; requests in flight finished');
  }
}
