import { isAway, RedisOutage, REDIS_PROBE_EVERY_MS, requireReady } from './redis-outage';

describe('RedisOutage', () => {
  it('a feature degraded by an outage logs it once, not per call, and tries Redis again now and then', () => {
    const logger = { warn: jest.fn(), log: jest.fn() };
    const conn = { status: 'ready' };
    const outage = new RedisOutage(conn, logger, 'counts are not kept', 'counts are kept again');
    expect(outage.mayTry()).toBe(true);
    conn.status = 'reconnecting';
    for (let i = 0; i < 100; i++) expect(outage.mayTry()).toBe(false);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    // Back, but it hung last time: one call per probe interval tries.
    conn.status = 'ready';
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + REDIS_PROBE_EVERY_MS + 1);
    expect(outage.mayTry()).toBe(true);
    expect(outage.mayTry()).toBe(false);
    outage.worked();
    expect(outage.mayTry()).toBe(true);
    expect(logger.log).toHaveBeenCalledTimes(1);
    jest.restoreAllMocks();
  });

  it('a connection still making its first connection is not away: a process that has just started waits for it (bounded by the command timeout)', () => {
    for (const status of ['wait', 'connecting', 'connect', 'ready']) {
      expect(isAway({ status })).toBe(false);
      expect(() => requireReady({ status })).not.toThrow();
    }
    for (const status of ['reconnecting', 'close', 'end']) {
      expect(isAway({ status })).toBe(true);
      expect(() => requireReady({ status })).toThrow('Redis is not reachable');
    }
    const outage = new RedisOutage({ status: 'connecting' }, { warn: jest.fn(), log: jest.fn() }, 'a', 'b');
    expect(outage.mayTry()).toBe(true);
  });
});
