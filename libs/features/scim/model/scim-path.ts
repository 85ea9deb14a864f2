import { Filter, parse } from 'scim2-parse-filter';
import { invalidFilter, invalidPath } from './scim-error';
import { AttrDef, findAttr, isIgnoredAttr, ResourceDef, SchemaDef } from './scim-schemas';

/** What a PATCH path (or a key of a path-less value) names. */
export type PathTarget =
  /** An attribute RFC 7643 defines that this service accepts and does not keep. */
  | { kind: 'ignored'; path: string }
  /** A whole extension schema, e.g. the enterprise SCIM_URN as a key whose value holds its attributes. */
  | { kind: 'extension'; path: string; schema: SchemaDef }
  | {
      kind: 'attr';
      path: string;
      /** null for the core schema, else the extension SCIM_URN under which its attributes are kept. */
      container: string | null;
      attr: AttrDef;
      /** A value filter on a multi-valued attribute: `emails[type eq "work"]`. */
      filter?: Filter;
      sub?: AttrDef;
      /** The sub-attribute is one RFC 7643 defines and this service does not keep. */
      subIgnored?: boolean;
    };

const NAME = /^[A-Za-z$][\w$-]*/;

/** Index of the `]` closing the `[` at `open`, skipping quoted strings (with `\"` escapes); -1 if none. */
function closingBracket(text: string, open: number): number {
  let quoted = false;
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ']') return i;
  }
  return -1;
}

/**
 * Parses an RFC 7644 §3.5.2 path: `[urn:…:]attr[.sub]` or `[urn:…:]attr[filter][.sub]`. Names
 * match case-insensitively. Unknown attributes and malformed paths answer 400 invalidPath; a
 * malformed value filter answers 400 invalidFilter.
 */
export function parseScimPath(path: string, def: ResourceDef): PathTarget {
  const original = path;
  let rest = path.trim();
  let schema = def.core;
  let container: string | null = null;
  if (/^urn:/i.test(rest)) {
    const lower = rest.toLowerCase();
    const found = [def.core, ...def.extensions].find((s) => lower === s.id.toLowerCase() || lower.startsWith(`${s.id.toLowerCase()}:`));
    if (!found) throw invalidPath(`"${original}" names a schema this ${def.name} resource does not have.`);
    if (lower === found.id.toLowerCase()) {
      if (found === def.core) throw invalidPath(`"${original}" names a schema, not an attribute.`);
      return { kind: 'extension', path: original, schema: found };
    }
    rest = rest.slice(found.id.length + 1);
    schema = found;
    container = found === def.core ? null : found.id;
  }
  const name = NAME.exec(rest)?.[0];
  if (!name) throw invalidPath(`"${original}" is not a valid attribute path.`);
  let i = name.length;
  let filterText: string | undefined;
  if (rest[i] === '[') {
    const end = closingBracket(rest, i);
    if (end < 0) throw invalidPath(`"${original}": the value filter is not closed with "]".`);
    filterText = rest.slice(i + 1, end);
    i = end + 1;
  }
  let subName: string | undefined;
  if (rest[i] === '.') {
    subName = NAME.exec(rest.slice(i + 1))?.[0];
    if (!subName) throw invalidPath(`"${original}" is not a valid attribute path.`);
    i += 1 + subName.length;
  }
  if (i !== rest.length) throw invalidPath(`"${original}" is not a valid attribute path.`);

  const attr = findAttr(schema.attributes, name) ?? (container === null ? findAttr(def.common, name) : undefined);
  if (!attr) {
    if (isIgnoredAttr(schema.ignored, name)) return { kind: 'ignored', path: original };
    throw invalidPath(`"${original}": the ${def.name} resource has no attribute "${name}".`);
  }
  const target: PathTarget = { kind: 'attr', path: original, container, attr };
  if (filterText !== undefined) {
    if (!attr.multiValued) throw invalidPath(`"${original}": ${attr.name} is not multi-valued, so it takes no value filter.`);
    try {
      target.filter = parse(filterText);
    } catch {
      throw invalidFilter(`"${original}": the value filter "${filterText}" is not a valid SCIM filter.`);
    }
  }
  if (subName !== undefined) {
    if (attr.type !== 'complex') throw invalidPath(`"${original}": ${attr.name} has no sub-attributes.`);
    const sub = findAttr(attr.subAttributes, subName);
    if (sub) target.sub = sub;
    else if (isIgnoredAttr(attr.ignoredSubAttributes, subName)) target.subIgnored = true;
    else throw invalidPath(`"${original}": ${attr.name} has no sub-attribute "${subName}".`);
  }
  return target;
}

const asBool = (v: unknown): boolean | undefined =>
  typeof v === 'boolean' ? v : typeof v === 'string' && /^(true|false)$/i.test(v.trim()) ? v.trim().toLowerCase() === 'true' : undefined;

/** Compares an element's value with a filter's, as the sub-attribute's `caseExact` says. */
function compare(sub: AttrDef | undefined, actual: unknown, expected: unknown): number | undefined {
  if (actual === undefined || actual === null) return undefined;
  if (typeof expected === 'boolean' || sub?.type === 'boolean') {
    const a = asBool(actual);
    const e = asBool(expected);
    return a === undefined || e === undefined ? undefined : Number(a) - Number(e);
  }
  const exact = sub?.caseExact ?? false;
  const a = exact ? String(actual) : String(actual).toLowerCase();
  const e = exact ? String(expected) : String(expected).toLowerCase();
  return a < e ? -1 : a > e ? 1 : 0;
}

/** Whether one element of a multi-valued complex attribute passes a value filter. */
export function elementMatches(filter: Filter, element: unknown, attr: AttrDef): boolean {
  if (element === null || typeof element !== 'object') return false;
  const item = element as Record<string, unknown>;
  switch (filter.op) {
    case 'and':
      return (filter as { filters: Filter[] }).filters.every((f) => elementMatches(f, item, attr));
    case 'or':
      return (filter as { filters: Filter[] }).filters.some((f) => elementMatches(f, item, attr));
    case 'not':
      return !elementMatches((filter as { filter: Filter }).filter, item, attr);
    case '[]':
      return false;
  }
  const { attrPath, compValue } = filter as { attrPath: string; compValue?: unknown };
  const subName = attrPath.includes('.') && attrPath.toLowerCase().startsWith(`${attr.name.toLowerCase()}.`) ? attrPath.slice(attr.name.length + 1) : attrPath;
  const sub = findAttr(attr.subAttributes, subName);
  const key = Object.keys(item).find((k) => k.toLowerCase() === subName.toLowerCase());
  const actual = key === undefined ? undefined : item[key];
  if (filter.op === 'pr') return actual !== undefined && actual !== null && actual !== '';
  const c = compare(sub, actual, compValue);
  const text = actual === undefined || actual === null ? undefined : sub?.caseExact ? String(actual) : String(actual).toLowerCase();
  const wanted = sub?.caseExact ? String(compValue) : String(compValue).toLowerCase();
  switch (filter.op) {
    case 'eq':
      return c === 0;
    case 'ne':
      return c !== 0;
    case 'co':
      return text !== undefined && text.includes(wanted);
    case 'sw':
      return text !== undefined && text.startsWith(wanted);
    case 'ew':
      return text !== undefined && text.endsWith(wanted);
    case 'gt':
      return c !== undefined && c > 0;
    case 'ge':
      return c !== undefined && c >= 0;
    case 'lt':
      return c !== undefined && c < 0;
    case 'le':
      return c !== undefined && c <= 0;
    default:
      return false;
  }
}

/**
 * The element a value filter describes when it is only `eq` comparisons joined by `and`
 * (`emails[type eq "work"]` → `{type: "work"}`): what an add or replace through a filter that
 * matches nothing creates, as Entra ID expects. Null for any other filter.
 */
export function filterSeed(filter: Filter, attr: AttrDef): Record<string, unknown> | null {
  const parts = filter.op === 'and' ? (filter as { filters: Filter[] }).filters : [filter];
  const seed: Record<string, unknown> = {};
  for (const part of parts) {
    if (part.op !== 'eq') return null;
    const { attrPath, compValue } = part as { attrPath: string; compValue: unknown };
    const sub = findAttr(attr.subAttributes, attrPath);
    if (!sub || sub.mutability === 'readOnly' || compValue === null) return null;
    seed[sub.name] = sub.type === 'boolean' ? asBool(compValue) : String(compValue);
  }
  return seed;
}
