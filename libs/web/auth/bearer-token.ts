import { Strategy } from 'passport-http-bearer';

/**
 * What the Authorization header holds. A malformed header says, where it can be told, what the
 * caller got wrong about its form: no scheme (the key alone), or another scheme than Bearer.
 */
export type BearerResult = { kind: 'missing' } | { kind: 'malformed'; scheme?: 'none' | { other: string | null } } | { kind: 'token'; token: string };

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

/** An auth-scheme as RFC 7235 writes one (a token); shown back only when it is one, and short. */
const SCHEME = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,31}$/;

/**
 * Reads `Authorization: Bearer <token>` and nothing else (no query, body or cookie). The scheme
 * is matched in any letter case (RFC 7235 §2.1: `bearer` is Bearer).
 */
export function readBearer(authorization: string | undefined): BearerResult {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'missing' };
  outcome = MALFORMED;
  run.authenticate({ headers: { authorization } });
  if (outcome.kind !== 'malformed') return outcome;
  const words = authorization.trim().split(/\s+/);
  if (words.length === 1 && !/^Bearer$/i.test(words[0])) return { kind: 'malformed', scheme: 'none' };
  if (!/^Bearer$/i.test(words[0])) return { kind: 'malformed', scheme: { other: SCHEME.test(words[0]) ? words[0] : null } };
  return outcome;
}
