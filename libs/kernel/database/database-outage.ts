/**
 * SQLSTATEs that say the database could not serve the call now, not that the call is wrong:
 * too_many_connections, admin_shutdown, crash_shutdown, cannot_connect_now.
 */
const UNAVAILABLE_CODES = new Set(['53300', '57P01', '57P02', '57P03']);

/**
 * The words of the refusals that carry no SQLSTATE of their own: PgBouncer's (08P01 with these
 * messages: no server connection freed within `query_wait_timeout`, its client limit, no server it
 * can reach) and node-postgres' pool and socket (no connection within `connectionTimeoutMillis`,
 * the connection dropped, nothing listening).
 */
const UNAVAILABLE_MESSAGES =
  /^(query_wait_timeout|no more connections allowed|pgbouncer cannot connect to server|server login has been failing|timeout exceeded when trying to connect|Connection terminated unexpectedly|Connection terminated due to connection timeout|connect ECONNREFUSED)/;

/**
 * Whether an error means the database (or the pooler in front of it) could not take the call for
 * the moment (every pooled connection busy, restarting, unreachable), as opposed to a bug: such a
 * call may work if tried again in a few seconds. TypeORM's QueryFailedError keeps the driver's
 * message and its `driverError`; either form is read.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const driver = (err as { driverError?: { code?: unknown; message?: unknown } }).driverError;
  const code = (err as { code?: unknown }).code ?? driver?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return UNAVAILABLE_MESSAGES.test(err.message) || (typeof driver?.message === 'string' && UNAVAILABLE_MESSAGES.test(driver.message));
}
