import { Controller, Get, Inject, Logger, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { REDIS } from '@kernel/redis';
import type { Response } from 'express';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';

/** Liveness and readiness probes, outside /v1/, without a key and outside the refused-key throttle. */
@ApiExcludeController()
@Public({ throttle: false })
@Controller('health')
export class HealthController {
  private readonly logger = new Logger(HealthController.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @Get('live')
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res() res: Response): Promise<void> {
    const [database, redis] = await Promise.all([
      this.dataSource.query('SELECT 1').then(
        () => 'up',
        () => 'down',
      ),
      this.redis.ping().then(
        () => 'up',
        () => 'down',
      ),
    ]);
    const ok = database === 'up' && redis === 'up';
    if (!ok) this.logger.warn({ checks: { database, redis } }, 'not ready');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', checks: { database, redis } });
  }
}
