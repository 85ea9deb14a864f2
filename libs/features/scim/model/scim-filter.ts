import { Filter, parse } from 'scim2-parse-filter';
import { invalidFilter } from './scim-error';
import { SCIM_URN } from './scim-schemas';

/** One `eq` condition of a Users filter; the conditions of a filter are joined by `and`. */
export type UserCondition =
  | { attr: 'userName' | 'externalId' | 'displayName'; value: string }
  /** `emails.value eq` (type null) or `emails[type eq "work"].value eq` (type "work"). */
  | { attr: 'email'; type: string | null; value: string };

export type GroupCondition = { attr: 'displayName' | 'externalId'; value: string };

const SUPPORTED_USERS = 'userName, externalId, displayName, emails.value or emails[type eq "…"].value';
const SUPPORTED_GROUPS = 'displayName or externalId';

const refuse = (text: string, why: string, supported: string) =>
  invalidFilter(`Unsupported filter "${text}": ${why}. Supported: eq on ${supported}, joined by and.`);

function parseText(text: string): Filter {
  if (text.trim() === '') throw invalidFilter('The filter is empty.');
  try {
    return parse(text);
  } catch {
    throw invalidFilter(`"${text}" is not a valid SCIM filter.`);
  }
}

/** Attribute path without the core schema SCIM_URN, lowercased: `urn:…:core:2.0:User:userName` → `username`. */
function bare(path: string, coreUrn: string): string {
  const lower = path.toLowerCase();
  const prefix = `${coreUrn.toLowerCase()}:`;
  return lower.startsWith(prefix) ? lower.slice(prefix.length) : lower;
}

/** The top-level `and` terms, keeping `attr[filter].sub op value` (which parses as a nested and) whole. */
function terms(f: Filter): Filter[] {
  if (f.op !== 'and') return [f];
  const parts = (f as { filters: Filter[] }).filters;
  const [first, second] = parts as Array<Filter & { attrPath?: string }>;
  const composite = parts.length === 2 && first.op === '[]' && !!second.attrPath?.toLowerCase().startsWith(`${first.attrPath?.toLowerCase()}.`);
  if (composite) return [f];
  return parts.flatMap(terms);
}

const isEq = (f: Filter): f is Filter & { attrPath: string; compValue: unknown } => f.op === 'eq';

function stringValue(f: { compValue: unknown }, text: string, supported: string): string {
  if (typeof f.compValue !== 'string') throw refuse(text, 'compare with a string in double quotes', supported);
  return f.compValue;
}

/** An `emails[…]` value filter: `type eq "work"`, `value eq "x"`, or both joined by and. */
function emailValueFilter(f: Filter, text: string): { type: string | null; value: string | null } {
  const parts = f.op === 'and' ? (f as { filters: Filter[] }).filters : [f];
  let type: string | null = null;
  let value: string | null = null;
  for (const p of parts) {
    if (!isEq(p)) throw refuse(text, 'inside emails[…] only eq on type and value is supported', SUPPORTED_USERS);
    const name = p.attrPath.toLowerCase();
    if (name === 'type' && type === null) type = stringValue(p, text, SUPPORTED_USERS);
    else if (name === 'value' && value === null) value = stringValue(p, text, SUPPORTED_USERS);
    else throw refuse(text, 'inside emails[…] only eq on type and value is supported', SUPPORTED_USERS);
  }
  return { type, value };
}

/**
 * A GET /Users filter as the conditions this service answers: eq on userName (ignoring case),
 * externalId (exact), displayName (ignoring case) and email values (ignoring case), joined by
 * and. Anything else answers 400 invalidFilter.
 */
export function parseUserFilter(text: string): UserCondition[] {
  return terms(parseText(text)).map((t): UserCondition => {
    if (t.op === 'and') {
      // emails[type eq "work"].value eq "x" → and( emails[type eq "work"], emails.value eq "x" )
      const [valuePath, comparison] = (t as { filters: Filter[] }).filters as [Filter & { attrPath: string; valFilter: Filter }, Filter];
      if (bare(valuePath.attrPath, SCIM_URN.user) !== 'emails' || !isEq(comparison) || bare(comparison.attrPath, SCIM_URN.user) !== 'emails.value') {
        throw refuse(text, 'only emails[type eq "…"].value eq "…" is supported with a value filter', SUPPORTED_USERS);
      }
      const inner = emailValueFilter(valuePath.valFilter, text);
      if (inner.value !== null) throw refuse(text, 'emails[value eq …].value is not supported', SUPPORTED_USERS);
      return { attr: 'email', type: inner.type, value: stringValue(comparison, text, SUPPORTED_USERS) };
    }
    if (t.op === '[]') {
      const vp = t as { attrPath: string; valFilter: Filter };
      if (bare(vp.attrPath, SCIM_URN.user) !== 'emails') throw refuse(text, `${vp.attrPath}[…] is not supported`, SUPPORTED_USERS);
      const inner = emailValueFilter(vp.valFilter, text);
      if (inner.value === null) throw refuse(text, 'emails[…] must compare the value', SUPPORTED_USERS);
      return { attr: 'email', type: inner.type, value: inner.value };
    }
    if (!isEq(t)) throw refuse(text, `the operator "${t.op}" is not supported`, SUPPORTED_USERS);
    const value = stringValue(t, text, SUPPORTED_USERS);
    switch (bare(t.attrPath, SCIM_URN.user)) {
      case 'username':
        return { attr: 'userName', value };
      case 'externalid':
        return { attr: 'externalId', value };
      case 'displayname':
        return { attr: 'displayName', value };
      case 'emails':
      case 'emails.value':
        return { attr: 'email', type: null, value };
      default:
        throw refuse(text, `filtering on ${t.attrPath} is not supported`, SUPPORTED_USERS);
    }
  });
}

/** A GET /Groups filter: eq on displayName (ignoring case) or externalId (exact), joined by and. */
export function parseGroupFilter(text: string): GroupCondition[] {
  return terms(parseText(text)).map((t): GroupCondition => {
    if (!isEq(t))
      throw refuse(text, t.op === 'and' || t.op === '[]' ? 'value filters are not supported' : `the operator "${t.op}" is not supported`, SUPPORTED_GROUPS);
    const value = stringValue(t, text, SUPPORTED_GROUPS);
    switch (bare(t.attrPath, SCIM_URN.group)) {
      case 'displayname':
        return { attr: 'displayName', value };
      case 'externalid':
        return { attr: 'externalId', value };
      default:
        throw refuse(text, `filtering on ${t.attrPath} is not supported`, SUPPORTED_GROUPS);
    }
  });
}
