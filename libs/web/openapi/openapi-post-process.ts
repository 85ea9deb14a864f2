import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CODES, ErrorCode } from '@kernel/core';
import { codesOfErrorSchema, errorSchema, MAX_BODY_ARRAY, STATUS_BY_CODE, NO_NUL } from '@web/http';

type Json = Record<string, unknown>;

/** 3.0-style `nullable: true` → 3.1 `type: [T, "null"]` (or `oneOf` with null for a `$ref`). */
export function toOpenApi31Nullables(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toOpenApi31Nullables);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) out[k] = toOpenApi31Nullables(v);
  if (out.nullable === true) {
    delete out.nullable;
    // A composed schema ($ref / allOf, as swagger emits `{type: Dto, nullable: true}`) cannot take
    // "null" into its type list: the composition would still refuse null. Wrap it instead.
    if (out.$ref || out.allOf || out.oneOf || out.anyOf) {
      const { description, type: _type, ...schema } = out;
      void _type;
      // A lone `allOf: [{$ref}]` is that $ref (linters flag a one-schema allOf as illogical).
      const only = Object.keys(schema).length === 1 && Array.isArray(schema.allOf) && schema.allOf.length === 1 ? (schema.allOf[0] as Json) : schema;
      return { ...(description ? { description } : {}), oneOf: [only, { type: 'null' }] };
    }
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type)) out.type = [...new Set([...(out.type as string[]), 'null'])];
  } else if (out.nullable === false) {
    delete out.nullable;
  }
  return out;
}

/** Objects answer exactly their documented fields, and requests may carry no others. */
function closeObjects(schemas: Record<string, Json>): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const n = node as Json;
    if (n.properties && n.additionalProperties === undefined) n.additionalProperties = false;
    Object.values(n).forEach(visit);
  };
  Object.values(schemas).forEach(visit);
}

const isStringSchema = (s: Json) => s.type === 'string' || (Array.isArray(s.type) && s.type.includes('string'));

/**
 * Writes into every request schema (bodies, reached through their $refs, and parameters) the
 * limits the body check enforces for all of them, so that DTOs need not repeat them: a string
 * with no pattern, enum or binary format gets NO_NUL; an array with no maxItems gets
 * MAX_BODY_ARRAY. Answer schemas are left as they are. (The 32-level nesting limit needs no
 * words: every request schema is closed and at most two levels deep.)
 */
export function stateRequestLimits(doc: Json): void {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const done = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object' || done.has(node)) return;
    done.add(node);
    const n = node as Json;
    if (typeof n.$ref === 'string') return visit(schemas[n.$ref.replace('#/components/schemas/', '')]);
    if (isStringSchema(n) && n.pattern === undefined && n.enum === undefined && n.const === undefined && n.format !== 'binary') n.pattern = NO_NUL;
    if ((n.type === 'array' || (Array.isArray(n.type) && n.type.includes('array'))) && n.maxItems === undefined) n.maxItems = MAX_BODY_ARRAY;
    Object.values(n).forEach(visit);
  };
  for (const item of Object.values((doc.paths ?? {}) as Json)) {
    for (const op of Object.values(item as Json) as Json[]) {
      if (!op || typeof op !== 'object') continue;
      for (const media of Object.values(((op.requestBody as Json | undefined)?.content ?? {}) as Json)) visit((media as Json).schema);
      for (const param of (op.parameters ?? []) as Json[]) visit(param.schema);
    }
  }
}

/** What an operation is, for the common errors that depend on it. */
export interface OperationShape {
  /** Its path template takes parameters (`{id}`): it names an object that may not exist. */
  names: boolean;
  /** It needs a scope (RequireScopes), which a key may lack. */
  scoped: boolean;
}

/**
 * The errors an authenticated call may answer, each with what it means there (none: the code says
 * it) and, when not every call can answer it, which can. Neither an unknown path (404) nor a wrong
 * method (405, with `Allow`) is a call of a described operation: the description says so in its
 * introduction, and an operation lists not_found only where it names an object.
 */
const COMMON_ERROR_CODES: Array<[ErrorCode, string | undefined, ((op: OperationShape) => boolean)?]> = [
  [
    'invalid_request',
    'malformed JSON, a body not sent as application/json or not in UTF-8, bad query parameters (an empty `cursor` too), or more than one `Authorization` header',
  ],
  ['unauthorised', 'no key sent, or the key is malformed or revoked (a header without the `Bearer` scheme is told the form it must have)'],
  ['module_off', undefined],
  ['scope_missing', undefined, (op) => op.scoped],
  ['ip_not_allowed', undefined],
  ['not_found', 'no such object in this organisation', (op) => op.names],
  [
    'rate_limited',
    'the connection used up its rate limit (see `Retry-After`, `RateLimit`), or too many calls from this address were refused 401 (or 400 for more than one `Authorization` header) this minute (see `Retry-After`)',
  ],
  ['server_error', 'an unexpected error; the message carries an error id'],
];

/** The codes of COMMON_ERROR_CODES an operation of this shape can answer, by status. */
export function commonErrorCodes(shape: OperationShape): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, , applies] of COMMON_ERROR_CODES) {
    if (applies && !applies(shape)) continue;
    byStatus.set(STATUS_BY_CODE[code], [...(byStatus.get(STATUS_BY_CODE[code]) ?? []), code]);
  }
  return byStatus;
}

/** The common error answers of an operation of this shape by status, the status of each code taken from the one table (STATUS_BY_CODE). */
export function commonErrors(shape: OperationShape): Record<string, string> {
  const byStatus = new Map<number, string[]>();
  for (const [code, why, applies] of COMMON_ERROR_CODES) {
    if (applies && !applies(shape)) continue;
    const status = STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), why ? `\`${code}\`: ${why}` : `\`${code}\``]);
  }
  return Object.fromEntries([...byStatus].map(([status, parts]) => [String(status), `${parts.join(', ')}.`]));
}

/**
 * The rate-limit answer fields (draft-ietf-httpapi-ratelimit-headers-10) and Retry-After, as
 * components; every keyed operation's answers refer to them (docs/operations/scale.md, "Rate limits").
 */
export const RATE_LIMIT_HEADERS: Record<string, Json> = {
  'RateLimit-Policy': {
    description:
      'The connection\'s rate limit, on every answer to a call with a valid key (draft-ietf-httpapi-ratelimit-headers-10): `"rest";q=200;w=2` is a token bucket of 200 calls that refills in 2 seconds (100 a second). SCIM (`/scim/v2/`) has a bucket of its own, `"scim"`.',
    schema: { type: 'string', pattern: '^"[a-z]+";q=[0-9]+;w=[0-9]+$' },
    example: '"rest";q=200;w=2',
  },
  RateLimit: {
    description:
      'What is left of the bucket after this call: `r` calls, full again in `t` seconds. Left out while the service cannot reach its Redis (calls are not limited then).',
    schema: { type: 'string', pattern: '^"[a-z]+";r=[0-9]+;t=[0-9]+$' },
    example: '"rest";r=57;t=2',
  },
  'Retry-After': {
    description: 'On a 429: whole seconds to wait before calling again.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

const rateLimitHeaderRefs = (withRetryAfter: boolean): Json =>
  Object.fromEntries(
    Object.keys(RATE_LIMIT_HEADERS)
      .filter((name) => withRetryAfter || name !== 'Retry-After')
      .map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );

/**
 * Finishes the generated document: the 3.1 nullable form, build 47 in `info`, the common error
 * answers of every authenticated call, each error answer's schema listing the codes that call can
 * answer (SCIM's error schema under /scim/), `X-Request-Id`, and the rate-limit fields on the
 * answers of every authenticated call.
 */
export function finishDocument(doc: OpenAPIObject): OpenAPIObject {
  const out = toOpenApi31Nullables(doc) as OpenAPIObject & Json;
  out.openapi = '3.1.0';
  (out.info as unknown as Json)['x-build'] = 47;
  out.components = out.components ?? {};
  closeObjects(out.components.schemas as Record<string, Json>);
  stateRequestLimits(out);
  out.components.headers = {
    'X-Request-Id': { description: 'Id of this request, for support and logs.', schema: { type: 'string' } },
    ...RATE_LIMIT_HEADERS,
  } as never;
  for (const [path, item] of Object.entries(out.paths ?? {})) {
    for (const op of Object.values(item as Json) as Json[]) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      // SCIM's operations are described by hand (scim-openapi.ts) and each answers RFC 7644's error
      // schema, which lists no codes: their 403 still names scope_missing.
      const scopes = op['x-scopes'];
      delete op['x-scopes'];
      const shape: OperationShape = { names: path.includes('{'), scoped: path.startsWith('/scim/') || (Array.isArray(scopes) && scopes.length > 0) };
      const common = commonErrors(shape);
      const commonCodes = commonErrorCodes(shape);
      const responses = op.responses as Record<string, Json>;
      const isPublic = Array.isArray(op.security) && (op.security as unknown[]).length === 0;
      if (!isPublic) {
        for (const [status, description] of Object.entries(common)) {
          const own = responses[status];
          responses[status] = own ? { ...own, description: `${own.description}; ${description}` } : { description };
        }
      }
      // Each error answer lists the codes this call can answer: its own (ApiErrors) and, for a call
      // that needs a key, the front door's of that status.
      const scim = path.startsWith('/scim/');
      for (const [status, r] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        if (scim) {
          r.content = { 'application/scim+json': { schema: { $ref: '#/components/schemas/ScimError' } } };
          continue;
        }
        const own = codesOfErrorSchema((r.content as Json | undefined)?.['application/json'] && ((r.content as Json)['application/json'] as Json).schema);
        const codes = [...new Set([...own, ...(isPublic ? [] : (commonCodes.get(Number(status)) ?? []))])];
        r.content = { 'application/json': { schema: errorSchema(codes.length ? codes : ERROR_CODES.filter((c) => STATUS_BY_CODE[c] === Number(status))) } };
      }
      for (const [status, r] of Object.entries(responses)) {
        if (r.content) r.headers = { ...((r.headers as Json) ?? {}), 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
        // Every answer to a valid key carries the rate-limit fields; a 401 (no valid key) never does.
        if (!isPublic && status !== '401') r.headers = { ...((r.headers as Json) ?? {}), ...rateLimitHeaderRefs(status === '429') };
      }
    }
  }
  return out;
}
