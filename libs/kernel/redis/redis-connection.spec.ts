import { AppConfig, validateEnv } from '@kernel/config';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRedis, redisConnectionOptions } from './redis-connection';

const settings = (env: Record<string, string>) => new AppConfig(validateEnv(env)).redis;

describe('Redis settings and the connection factory', () => {
  it('a plain URL: host, port, database, no TLS, no user', () => {
    const opts = redisConnectionOptions(settings({ REDIS_URL: 'redis://cache.internal:6390/3' }));
    expect(opts).toMatchObject({ host: 'cache.internal', port: 6390, db: 3, username: undefined, password: undefined });
    expect(opts.tls).toBeUndefined();
    expect(opts.sentinels).toBeUndefined();
  });

  it('rediss:// with an ACL user (percent-encoded password) and a CA file: verified TLS with that CA', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ia-ca-'));
    writeFileSync(join(dir, 'ca.pem'), 'PEM');
    const s = settings({ REDIS_URL: 'rediss://ia-app:p%40ss%3Aword@redis.example:6380', REDIS_TLS_CA_FILE: join(dir, 'ca.pem') });
    const opts = redisConnectionOptions(s);
    expect(opts).toMatchObject({ host: 'redis.example', port: 6380, username: 'ia-app', password: 'p@ss:word' });
    expect(opts.tls).toEqual({ rejectUnauthorized: true, ca: Buffer.from('PEM') });
    expect(describeRedis(s)).toBe('rediss://ia-app@redis.example:6380/0');
    expect(describeRedis(s)).not.toContain('p@ss');
  });

  it('Sentinel: the sentinels, the master name and their own credentials; the URL gives user, password and database', () => {
    const s = settings({
      REDIS_URL: 'redis://:secret@ignored:1/2',
      REDIS_SENTINELS: 's1:26379, [::1]:26380',
      REDIS_SENTINEL_MASTER: 'main',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    });
    const opts = redisConnectionOptions(s, { maxRetriesPerRequest: null });
    expect(opts).toMatchObject({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'main',
      password: 'secret',
      db: 2,
      sentinelPassword: 'sentinel-secret',
      failoverDetector: true,
      maxRetriesPerRequest: null,
    });
    expect(opts.host).toBeUndefined();
    expect(describeRedis(s)).toBe('redis://master "main" via sentinels s1:26379,::1:26380');
  });

  it('a READONLY answer (the old master after a failover) makes the connection reconnect and resend', () => {
    const { reconnectOnError } = redisConnectionOptions(settings({}));
    expect(reconnectOnError?.(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(reconnectOnError?.(new Error('ERR something else'))).toBe(false);
  });

  it.each([
    [{ REDIS_URL: 'http://localhost:6379' }, /REDIS_URL: scheme must be redis:\/\/ or rediss:\/\//],
    [{ REDIS_URL: 'not a url' }, /REDIS_URL: is not a URL/],
    [{ REDIS_URL: 'redis://localhost/abc' }, /REDIS_URL: the path must be a database number/],
    [{ REDIS_SENTINELS: 's1' }, /REDIS_SENTINELS: "s1" is not host:port/],
    [{ REDIS_SENTINELS: 's1:0' }, /REDIS_SENTINELS: "s1:0" is not host:port/],
    [{ REDIS_TLS_CA_FILE: '/etc/ca.pem' }, /REDIS_TLS_CA_FILE: is set but REDIS_URL is not rediss:\/\//],
    [{ REDIS_SENTINEL_PASSWORD: 'x' }, /REDIS_SENTINEL_PASSWORD: are set but REDIS_SENTINELS is empty/],
    [{ REDIS_PREFIX: '{ia}' }, /REDIS_PREFIX: must not contain \{ or \}/],
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => settings(env as Record<string, string>)).toThrow(message);
  });

  it('a CA file that cannot be read is named when the connection is made', () => {
    const s = settings({ REDIS_URL: 'rediss://localhost', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' });
    expect(() => redisConnectionOptions(s)).toThrow(/REDIS_TLS_CA_FILE: cannot read \/nonexistent\/ca\.pem: ENOENT/);
  });
});
