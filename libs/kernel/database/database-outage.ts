/**
 * SQLSTATEs that say the database could not serve the call now, not that the call is wrong: the
 * connection exceptions (class 08, PgBouncer's refusals among them), the operator interventions
 * (class 57P: shutting down, starting up) and too_many_connections.
 */
const UNAVAILABLE_CODE = /^(08|57P|53300$)/;

/** Socket errors of a connection to Postgres or to the pooler in front of it. */
const SOCKET_CODES = /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH)$/;

/**
 * The words of the refusals that may come without a code: PgBouncer's (no server connection freed
 * within `query_wait_timeout`, its client limit, no server it can reach) and node-postgres' pool and
 * socket (no connection within `connectionTimeoutMillis`, the connection dropped, nothing listening).
 */
const UNAVAILABLE_MESSAGES =
  /^(query_wait_timeout|no more connections allowed|pgbouncer cannot connect to server|server login has been failing|timeout exceeded when trying to connect|connect ECONNREFUSED)|Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i;

/**
 * Whether an error means the database (or the pooler in front of it) could not take the call for
 * the moment (every pooled connection busy, restarting, unreachable), as opposed to a bug: such a
 * call may work if tried again in a few seconds. TypeORM's QueryFailedError keeps the driver's
 * message and its `driverError`; either form is read.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  // Read as a plain object: a socket error comes from Node's own realm, not always this one's Error.
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } };
  return [e, e.driverError].some(
    (x) =>
      (typeof x?.code === 'string' && (UNAVAILABLE_CODE.test(x.code) || SOCKET_CODES.test(x.code))) ||
      (typeof x?.message === 'string' && UNAVAILABLE_MESSAGES.test(x.message)),
  );
}
