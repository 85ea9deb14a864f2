import { ConfigError, type RedisSettings } from '@kernel/config';
import Redis, { RedisOptions } from 'ioredis';
import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';

/**
 * The one place a Redis connection's options are made, from the configuration: the shared command
 * connection and its pub/sub subscriber (libs/redis), BullMQ's connections (libs/queue: queues,
 * workers and their blocking duplicates) and the test helpers all come from here, so `rediss://`,
 * an ACL user and Sentinel apply to every one of them alike.
 *
 * - `rediss://` turns TLS on, verified always (against REDIS_TLS_CA_FILE when set, else the
 *   system's CAs): Node's NODE_TLS_REJECT_UNAUTHORIZED does not switch it off for Redis.
 * - The URL's username and password are the ACL user (`AUTH username password`); a password alone
 *   is the `default` user's (requirepass).
 * - REDIS_SENTINELS: ioredis asks the sentinels for REDIS_SENTINEL_MASTER's address, connects there,
 *   follows a failover (`+switch-master`, which it subscribes to) and reconnects to the new master.
 */
export function redisConnectionOptions(settings: RedisSettings, extra: RedisOptions = {}): RedisOptions {
  const tls = settings.tls ? tlsOptions(settings) : undefined;
  const common: RedisOptions = {
    username: settings.username,
    password: settings.password,
    db: settings.db,
    // During a failover the old master answers writes with READONLY until the connection moves:
    // reconnect (to the master Sentinel names now) and send the command again.
    reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 2 : false),
  };
  if (settings.sentinels.length > 0) {
    return {
      ...common,
      sentinels: settings.sentinels.map((s) => ({ ...s })),
      name: settings.sentinelMaster,
      sentinelUsername: settings.sentinelUsername,
      sentinelPassword: settings.sentinelPassword,
      failoverDetector: true,
      ...(tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
      ...extra,
    };
  }
  return { ...common, host: settings.host, port: settings.port, ...(tls ? { tls } : {}), ...extra };
}

/** A new ioredis connection to the configured Redis (see redisConnectionOptions). */
export function createRedis(settings: RedisSettings, extra: RedisOptions = {}): Redis {
  return redisFromOptions(redisConnectionOptions(settings, extra));
}

/**
 * An ioredis connection from options made by redisConnectionOptions (BullMQ's client factory hands
 * them back with its own additions). With Sentinel, ioredis keeps a subscription to the sentinels
 * (its failover detector) that `QUIT` leaves open and reconnecting for ever: a connection that ends
 * drops it too, or a closed queue would keep its process from exiting.
 */
export function redisFromOptions(options: RedisOptions): Redis {
  const redis = new Redis(options);
  if (options.sentinels?.length) redis.once('end', () => redis.disconnect());
  return redis;
}

/** Where the connection goes, for logs: never the password. */
export function describeRedis(settings: RedisSettings): string {
  const scheme = settings.tls ? 'rediss' : 'redis';
  const user = settings.username ? `${settings.username}@` : '';
  if (settings.sentinels.length > 0) {
    return `${scheme}://${user}master "${settings.sentinelMaster}" via sentinels ${settings.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`;
  }
  return `${scheme}://${user}${settings.host}:${settings.port}/${settings.db}`;
}

function tlsOptions(settings: RedisSettings): TlsOptions {
  const tls: TlsOptions = { rejectUnauthorized: true };
  if (settings.tlsCaFile) {
    try {
      tls.ca = readFileSync(settings.tlsCaFile);
    } catch (err) {
      throw new ConfigError(`Invalid configuration:\n  REDIS_TLS_CA_FILE: cannot read ${settings.tlsCaFile}: ${(err as Error).message}`);
    }
  }
  return tls;
}
