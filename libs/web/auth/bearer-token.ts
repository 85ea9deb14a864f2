import { Strategy } from 'passport-http-bearer';

export type BearerResult = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

// passport-http-bearer parses RFC 6750's header form. Its strategy also reads `access_token`
// from the query and the body; the contract forbids that, so it only ever sees a request view
// that holds nothing but the Authorization header.
const strategy = new Strategy((token: string, done: (err: unknown, user?: unknown) => void) => done(null, token));

// One strategy run, reused: authenticate() reports synchronously through success/fail/error,
// so the outcome is read back right after the call (no per-call objects or closures).
let outcome: BearerResult = { kind: 'malformed' };
const MALFORMED: BearerResult = { kind: 'malformed' };
const run = Object.assign(Object.create(strategy) as { authenticate(req: unknown): void }, {
  success(token: unknown) {
    outcome = { kind: 'token', token: String(token) };
  },
  fail() {
    outcome = MALFORMED;
  },
  error() {
    outcome = MALFORMED;
  },
});

/** Reads `Authorization: Bearer <token>` and nothing else (no query, body or cookie). */
export function readBearer(authorization: string | undefined): BearerResult {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'missing' };
  outcome = MALFORMED;
  run.authenticate({ headers: { authorization } });
  return outcome;
}
