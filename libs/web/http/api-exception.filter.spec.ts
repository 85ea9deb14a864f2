import { isRedisUnavailable } from '@kernel/redis';
import type { Request } from 'express';
import Redis from 'ioredis';
import { ApiExceptionFilter } from './api-exception.filter';

describe('ApiExceptionFilter with Redis unreachable', () => {
  it('a call that cannot work without Redis answers 500 server_error with Retry-After, at once', async () => {
    // A client that never reaches its server: the command fails after the command timeout, not after the outage.
    const redis = new Redis({ port: 1, lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 200, retryStrategy: () => 50 });
    const t0 = Date.now();
    const err = await redis.get('x').catch((e: unknown) => e);
    redis.disconnect();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(isRedisUnavailable(err)).toBe(true);
    const filter = new ApiExceptionFilter({ allowedMethods: () => [] } as never);
    const answer = filter.classify(err, { path: '/v1/x', method: 'GET' } as Request);
    expect(answer).toMatchObject({ code: 'server_error', headers: { 'Retry-After': '5' } });
    expect(isRedisUnavailable(new Error('something else'))).toBe(false);
  });
});
