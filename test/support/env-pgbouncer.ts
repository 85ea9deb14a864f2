// The e2e-pgbouncer project: the pool through PgBouncer (transaction mode), what needs a session
// (LISTEN, the migration lock, migrations) on the direct connection, as docs/operations/scale.md "A connection
// pooler" tells operators to set them.
const pooled = process.env.TEST_PGBOUNCER_URL;
if (!pooled) throw new Error('TEST_PGBOUNCER_URL is unset: the e2e-pgbouncer project starts PgBouncer in its global setup');
process.env.DATABASE_DIRECT_URL = process.env.DATABASE_URL;
process.env.DATABASE_URL = pooled;
// Its own Redis keys (under the run's prefix, so the global teardown still clears them): the same
// specs run in the e2e project too, and counters such as the refused-key throttle must not carry over.
process.env.REDIS_PREFIX = `${process.env.REDIS_PREFIX}:pgbouncer`;
