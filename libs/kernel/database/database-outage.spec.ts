import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-outage';

const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('isDatabaseUnavailable', () => {
  it.each([
    ['PgBouncer found no free server connection in time', pgError('query_wait_timeout', '08P01')],
    ['PgBouncer at its client limit', pgError('no more connections allowed (max_client_conn)', '08P01')],
    ['the pool found no connection in time', pgError('timeout exceeded when trying to connect')],
    ['the connection dropped', pgError('Connection terminated unexpectedly')],
    ['nothing listening', pgError('connect ECONNREFUSED 127.0.0.1:6432')],
    ['Postgres at max_connections', pgError('sorry, too many clients already', '53300')],
    ['Postgres starting', pgError('the database system is starting up', '57P03')],
    ['Postgres shutting down', pgError('terminating connection due to administrator command', '57P01')],
    ['the same, as TypeORM wraps it', new QueryFailedError('SELECT 1', [], pgError('query_wait_timeout', '08P01'))],
    ['the connection lost mid-statement', pgError('server closed the connection unexpectedly', '08006')],
    ['a reset socket', pgError('read ECONNRESET', 'ECONNRESET')],
    ['the client broken', pgError('Client has encountered a connection error and is not queryable')],
    ['a socket error from another realm (not this realm’s Error)', { message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' }],
  ])('%s: unavailable', (_, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('duplicate key value violates unique constraint "x"', '23505')],
    ['a deadlock', pgError('deadlock detected', '40P01')],
    ['a syntax error', new QueryFailedError('SELEC 1', [], pgError('syntax error at or near "SELEC"', '42601'))],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a lock timeout', pgError('canceling statement due to lock timeout', '55P03')],
    ['not an error', 'query_wait_timeout'],
    ['nothing', undefined],
  ])('%s: not unavailable', (_, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
