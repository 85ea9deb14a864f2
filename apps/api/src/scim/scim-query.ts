import { DomainError } from '@app/domain';
import { attributeList, invalidFilter, ScimJson, Projection, SCIM_DEFAULT_COUNT, SCIM_MAX_RESULTS, ScimList, ScimPage, SCIM_URN } from '@app/domain';

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

function integer(query: Record<string, unknown>, name: string): number | undefined {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw.trim())) throw new DomainError('invalid_request', `${name}: must be an integer.`);
  return Number(raw.trim());
}

/** `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5), on reads, lists and write answers. */
export function readProjection(query: Record<string, unknown>): Projection {
  return { attributes: attributeList(param(query, 'attributes')), excludedAttributes: attributeList(param(query, 'excludedAttributes')) };
}

/**
 * The query of a SCIM list (RFC 7644 §3.4.2): `filter`; `startIndex` (1-based; below 1 means 1);
 * `count` (default SCIM_DEFAULT_COUNT, at most SCIM_MAX_RESULTS, below 0 means 0); projection.
 * `sortBy`/`sortOrder` are ignored (sorting is not supported: answers are ordered by id).
 */
export function readListQuery(query: Record<string, unknown>): ScimListQuery {
  const filter = param(query, 'filter');
  if (filter !== undefined && typeof filter !== 'string') throw invalidFilter('Give one filter parameter.');
  const startIndex = Math.max(1, integer(query, 'startIndex') ?? 1);
  const count = Math.min(SCIM_MAX_RESULTS, Math.max(0, integer(query, 'count') ?? SCIM_DEFAULT_COUNT));
  return { filter, page: { startIndex, count }, projection: readProjection(query) };
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
