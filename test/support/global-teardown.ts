import Redis from 'ioredis';
import { dropDatabase } from './test-db';

/** Once per jest process, like the setup (the e2e-pgbouncer project's teardown calls it too). */
export default async function globalTeardown(): Promise<void> {
  const done = globalThis as { testDatabaseReady?: boolean };
  if (done.testDatabaseReady === false) return;
  done.testDatabaseReady = false;
  const server = process.env.TEST_DATABASE_SERVER_URL;
  const name = process.env.TEST_DATABASE_NAME;
  if (server && name && !process.env.KEEP_TEST_DATABASE) await dropDatabase(server, name);
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    // The run's keys, and BullMQ's under the hash-tagged prefix ({prefix}:bull).
    for (const pattern of [`${process.env.REDIS_PREFIX}:*`, `{${process.env.REDIS_PREFIX}}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
