import { DomainError } from '@kernel/core';
import { attributeList, Projection } from '../model/scim-projection';
import { invalidFilter, invalidSyntax } from '../model/scim-error';
import { ScimJson } from '../model/scim-patch';
import { SCIM_DEFAULT_COUNT, SCIM_MAX_RESULTS, ScimList, ScimPage } from '../model/scim-caller';
import { SCIM_URN } from '../model/scim-schemas';

export interface ScimListQuery {
  filter?: string;
  page: ScimPage;
  projection: Projection;
}

/** A query parameter by name, ignoring case (clients differ: `startIndex`, `startindex`). */
function param(query: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(query).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : query[key];
}

/**
 * The largest startIndex answered: a Java int, what Okta's and Entra's clients read it into. Any
 * larger integer is this one, a page past the end (empty, with the right totalResults).
 */
export const SCIM_MAX_START_INDEX = 2_147_483_647;

/**
 * An integer of any length, clamped to [min, max]: RFC 7644 §3.4.2.4 corrects out-of-range paging
 * values rather than refusing them, so only what is not an integer is refused (400).
 */
function integer(query: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return undefined;
  const digits = typeof raw === 'string' ? /^(-?)0*(\d+)$/.exec(raw.trim()) : null;
  if (!digits) throw new DomainError('invalid_request', `${name}: must be an integer.`);
  // Compared as digits first, so a number past 2^53 is never rounded into range.
  if (digits[2].length > 15) return digits[1] === '-' ? min : max;
  return Math.min(max, Math.max(min, Number(digits[1] + digits[2])));
}

/** `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5), on reads, lists and write answers. */
export function readProjection(query: Record<string, unknown>): Projection {
  return { attributes: attributeList(param(query, 'attributes')), excludedAttributes: attributeList(param(query, 'excludedAttributes')) };
}

/**
 * The query of a SCIM list (RFC 7644 §3.4.2): `filter`; `startIndex` (1-based; below 1 means 1);
 * `count` (default SCIM_DEFAULT_COUNT, at most SCIM_MAX_RESULTS, below 0 means 0); integers of any
 * length are clamped so, only what is not an integer is refused; projection.
 * `sortBy`/`sortOrder` are ignored (sorting is not supported: answers are ordered by id).
 */
export function readListQuery(query: Record<string, unknown>): ScimListQuery {
  const filter = param(query, 'filter');
  if (filter !== undefined && typeof filter !== 'string') throw invalidFilter('Give one filter parameter.');
  const startIndex = integer(query, 'startIndex', 1, SCIM_MAX_START_INDEX) ?? 1;
  const count = integer(query, 'count', 0, SCIM_MAX_RESULTS) ?? SCIM_DEFAULT_COUNT;
  return { filter, page: { startIndex, count }, projection: readProjection(query) };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A SearchRequest member as the query parameter of the same name would carry it. */
function asQueryValue(name: string, value: unknown): string {
  if (name === 'filter') {
    if (typeof value !== 'string') throw invalidFilter('filter: must be a string.');
    return value;
  }
  if (name === 'startIndex' || name === 'count') {
    // A JSON integer of any size is clamped as the query's digits are; BigInt writes it without an exponent.
    if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value).toString();
    if (typeof value === 'string') return value;
    throw new DomainError('invalid_request', `${name}: must be an integer.`);
  }
  // attributes, excludedAttributes: RFC 7644 §3.4.3 makes them lists of strings; a comma-separated string is read as on GET.
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(',');
  throw invalidSyntax(`${name}: must be an array of attribute names.`);
}

/**
 * The body of `POST /Users/.search` and `POST /Groups/.search` (RFC 7644 §3.4.3): a SearchRequest
 * read as the query of the GET it stands for, with the same rules and corrections; member names in
 * any case, null as absent, `sortBy`/`sortOrder` ignored (sorting is not supported) and other
 * members ignored as in a resource body. Query parameters of the POST are not read.
 */
export function readSearchRequest(body: unknown): ScimListQuery {
  if (!isObject(body)) throw invalidSyntax('The body must be a SearchRequest object.');
  const schemas = param(body, 'schemas');
  const urn = SCIM_URN.searchRequest.toLowerCase();
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === urn)) {
    throw invalidSyntax(`schemas must contain "${SCIM_URN.searchRequest}".`);
  }
  const query: Record<string, string> = {};
  for (const name of ['filter', 'startIndex', 'count', 'attributes', 'excludedAttributes']) {
    const value = param(body, name);
    if (value !== undefined && value !== null) query[name] = asQueryValue(name, value);
  }
  return readListQuery(query);
}

/** RFC 7644 §3.4.2 ListResponse; totalResults counts every match, not the page. */
export function listResponse(list: ScimList<ScimJson>, project: (r: ScimJson) => ScimJson): ScimJson {
  return {
    schemas: [SCIM_URN.listResponse],
    totalResults: list.totalResults,
    startIndex: list.startIndex,
    itemsPerPage: list.items.length,
    Resources: list.items.map(project),
  };
}
