import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { answerScrape, createScrapeServer, Metrics } from '@kernel/metrics';
import type { Server } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * The api's Prometheus endpoint: `GET /metrics` over plain HTTP on METRICS_PORT (on METRICS_HOST), a port
 * of its own so that it stays on the private network while the HTTPS port faces callers. It is
 * not part of the interface (no key, no OpenAPI entry). METRICS_ENABLED=false opens no port.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  /** The bound port (differs from the configured one when that is 0); undefined when metrics are off. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null | undefined)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.metrics.enabled) return;
    const server = createScrapeServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if ((req.method === 'GET' || req.method === 'HEAD') && path === '/metrics') return void answerScrape(this.metrics, res, req.method === 'HEAD');
      const body = 'Not found: this port serves GET /metrics only.\n';
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metrics.port, this.config.metrics.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // An error after listening (e.g. out of file descriptors on accept) is logged, not fatal.
    server.on('error', (err) => this.logger.error(`metrics server: ${err.message}`));
    this.server = server;
    this.logger.log(`metrics on http://${this.config.metrics.host}:${this.port}/metrics`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}
