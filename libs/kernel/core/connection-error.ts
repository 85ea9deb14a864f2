/** Postgres unreachable or restarting (the statement may work again), as opposed to a bug. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (typeof e.code === 'string' && (/^(08|57P)/.test(e.code) || /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH)$/.test(e.code))) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i.test(e.message ?? '');
}
