import globalTeardown from './global-teardown';
import type { PgBouncer } from './pgbouncer';

export default async function pgbouncerGlobalTeardown(): Promise<void> {
  const holder = globalThis as { pgbouncer?: PgBouncer };
  await holder.pgbouncer?.stop();
  holder.pgbouncer = undefined;
  await globalTeardown();
}
