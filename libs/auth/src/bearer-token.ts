import { Strategy } from 'passport-http-bearer';

export type BearerResult = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

// passport-http-bearer parses RFC 6750's header form. Its strategy also reads `access_token`
// from the query and the body; the contract forbids that, so it only ever sees a request view
// that holds nothing but the Authorization header.
const strategy = new Strategy((token: string, done: (err: unknown, user?: unknown) => void) => done(null, token));

/** Reads `Authorization: Bearer <token>` and nothing else (no query, body or cookie). */
export function readBearer(authorization: string | undefined): BearerResult {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'missing' };
  let result: BearerResult = { kind: 'malformed' };
  const run = Object.create(strategy) as {
    authenticate(req: unknown): void;
    success(user: unknown): void;
    fail(arg?: unknown): void;
    error(err: unknown): void;
  };
  run.success = (token: unknown) => {
    result = { kind: 'token', token: String(token) };
  };
  run.fail = () => {
    result = { kind: 'malformed' };
  };
  run.error = () => {
    result = { kind: 'malformed' };
  };
  run.authenticate({ headers: { authorization } });
  return result;
}
