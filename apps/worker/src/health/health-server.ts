import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { answerScrape, createScrapeServer, Metrics } from '@kernel/metrics';
import { REDIS } from '@kernel/redis';
import type Redis from 'ioredis';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';

/** A probe that hangs is as bad as one that fails: each check gets this long. */
const CHECK_TIMEOUT_MS = 2000;

type CheckState = 'up' | 'down';

/**
 * Liveness and readiness probes of the worker on WORKER_HEALTH_PORT (on METRICS_HOST), and its Prometheus metrics
 * (`/metrics`, unless METRICS_ENABLED=false). The worker has no HTTP application, so a bare
 * node:http server is enough (and keeps Express out of the process).
 */
@Injectable()
export class HealthServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(HealthServer.name);
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly metrics: Metrics,
  ) {}

  /** The bound port (differs from the configured one when that is 0). */
  get port(): number {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('health server is not listening');
    return address.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = createScrapeServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.workerHealthPort, this.config.metrics.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // An error after listening (e.g. out of file descriptors on accept) is logged, not fatal.
    server.on('error', (err) => this.logger.error(`health server: ${err.message}`));
    this.server = server;
    this.logger.log(
      `health probes on http://${this.config.metrics.host}:${this.port}/health/{live,ready}${this.config.metrics.enabled ? ', metrics on /metrics' : ''}`,
    );
  }

  /** Closed first on shutdown, so the orchestrator stops counting on this replica at once. */
  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.send(res, 404, { status: 'not_found' });
    if (path === '/health/live') return this.send(res, 200, { status: 'ok' });
    if (path === '/health/ready') {
      const [database, redis] = await Promise.all([this.check(() => this.dataSource.query('SELECT 1')), this.check(() => this.redis.ping())]);
      const ok = database === 'up' && redis === 'up';
      return ok ? this.send(res, 200, { status: 'ok' }) : this.send(res, 503, { status: 'unavailable', checks: { database, redis } });
    }
    if (path === '/metrics' && this.config.metrics.enabled) return answerScrape(this.metrics, res, req.method === 'HEAD');
    return this.send(res, 404, { status: 'not_found' });
  }

  private async check(probe: () => Promise<unknown>): Promise<CheckState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([probe(), timeout]);
      return 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    const json = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(json),
      'cache-control': 'no-store',
    });
    res.end(json);
  }
}
