import type { ScimJson } from './scim-patch';
import { SCIM_URN } from './scim-schemas';

/** What a logged SCIM request did: a change made, or a refusal (any 4xx but 429). */
export const PROVISIONING_OUTCOMES = ['succeeded', 'refused'] as const;
export type ProvisioningOutcome = (typeof PROVISIONING_OUTCOMES)[number];

/** The resources the log names; a refusal on another SCIM path (discovery, an unknown one) has `other`. */
export const PROVISIONING_RESOURCE_TYPES = ['User', 'Group', 'other'] as const;
export type ProvisioningResourceType = (typeof PROVISIONING_RESOURCE_TYPES)[number];

/** The operations: four writes (POST, PUT, PATCH, DELETE) and two reads (GET, `POST …/.search`), logged only when refused. */
export const PROVISIONING_OPERATIONS = ['create', 'replace', 'update', 'delete', 'read', 'search'] as const;
export type ProvisioningOperation = (typeof PROVISIONING_OPERATIONS)[number];
export const WRITE_OPERATIONS: readonly ProvisioningOperation[] = ['create', 'replace', 'update', 'delete'];

/** Who is provisioning, as far as the User-Agent tells. */
export const IDENTITY_PROVIDERS = ['okta', 'entra', 'other'] as const;
export type IdentityProvider = (typeof IDENTITY_PROVIDERS)[number];

/** The raw User-Agent is kept to this many characters. */
export const USER_AGENT_MAX = 200;
/** A refusal's detail is kept to this many characters. */
export const DETAIL_MAX = 500;
/** An attribute's old or new value is kept as JSON up to this many characters (longer: cut, marked). */
export const VALUE_MAX = 300;
/** At most this many attributes, and this many member ids each way, are kept per event (the counts are whole). */
export const ATTRIBUTES_MAX = 40;
export const MEMBERS_MAX = 100;

/** Attributes never written to the log, whatever a state holds (a secret, or not kept by the service). */
const NEVER_LOGGED = new Set(['password', 'x509certificates']);

/**
 * Text as Postgres keeps it: no NUL (a `text` column refuses it, and `jsonb` its escape), and no
 * lone UTF-16 surrogate (replaced by U+FFFD), whatever a request's path or body held.
 */
export const storable = (s: string): string =>
  s
    .split('\u0000')
    .join('')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** `s` storable and at most `max` characters, marked with … when cut (a surrogate pair the cut splits becomes U+FFFD). */
const cut = (s: string, max: number): string => {
  const clean = storable(s);
  return clean.length > max ? storable(`${clean.slice(0, max - 1)}…`) : clean;
};

/**
 * The identity provider a User-Agent names: Okta's connector sends `Okta SCIM Client …` (and
 * `Okta-Integration/…`); Microsoft Entra ID's provisioning service sends `Azure AD SCIM …` style
 * agents (older ones `Microsoft Azure AD …`, newer may say Entra); anything else is `other`.
 */
export function identityProviderOf(userAgent: string | undefined | null): IdentityProvider {
  if (!userAgent) return 'other';
  if (/\bokta\b/i.test(userAgent)) return 'okta';
  if (/azure\s*ad|azure\s*active\s*directory|\bentra\b|aad\s*provisioning/i.test(userAgent)) return 'entra';
  return 'other';
}

/** The User-Agent as kept: control characters dropped, cut to USER_AGENT_MAX; null when none. */
export function keptUserAgent(userAgent: string | undefined | null): string | null {
  if (!userAgent) return null;
  const clean = [...userAgent]
    .filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f)
    .join('')
    .trim();
  return clean === '' ? null : cut(clean, USER_AGENT_MAX);
}

/** A refusal's detail as kept. */
export const keptDetail = (detail: string | undefined | null): string | null => (detail ? cut(detail, DETAIL_MAX) : null);

/** What a SCIM request path and method are, for the log: the resource, its id and the operation. */
export interface ScimRequestShape {
  resourceType: ProvisioningResourceType;
  resourceId: string | null;
  operation: ProvisioningOperation;
}

/** Reads `/scim/v2/Users/123`, `/scim/v2/Groups/.search` (any letter case, a query ignored) with its method. */
export function scimRequestShape(method: string, url: string): ScimRequestShape {
  const path = url.split('?')[0];
  const m = /^\/scim\/v2\/(users|groups)(?:\/([^/]*))?\/?$/i.exec(path);
  const resourceType: ProvisioningResourceType = !m ? 'other' : m[1].toLowerCase() === 'users' ? 'User' : 'Group';
  const segment = m?.[2] ? safeDecode(m[2]) : null;
  const search = segment === '.search';
  const verb = method.toUpperCase();
  let operation: ProvisioningOperation;
  if (verb === 'POST') operation = search ? 'search' : 'create';
  else if (verb === 'PUT') operation = 'replace';
  else if (verb === 'PATCH') operation = 'update';
  else if (verb === 'DELETE') operation = 'delete';
  else operation = 'read';
  return { resourceType, resourceId: segment && !search ? cut(segment, 64) : null, operation };
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** One attribute changed: its path (`name.givenName`, `emails`, the enterprise extension's `…:User.department`), old and new values. */
export interface AttributeChange {
  attribute: string;
  old: unknown;
  new: unknown;
}

/** What a change did, as kept in the log (`changes`). */
export interface ProvisioningChanges {
  attributes: AttributeChange[];
  /** Attributes changed in all (more than kept when over ATTRIBUTES_MAX). */
  attributes_total: number;
  /** SCIM ids of the Users added to and removed from a group, as the client asked (Groups only). */
  members?: { added: string[]; removed: string[]; added_total: number; removed_total: number };
}

/** Flattens a SCIM state to attribute paths: complex values one level down (`name.givenName`), lists as a whole. */
function flatten(state: ScimJson | null): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!state) return out;
  for (const [key, value] of Object.entries(state)) {
    if (key === 'schemas' || key === 'id' || key === 'meta' || key === 'members' || NEVER_LOGGED.has(key.toLowerCase())) continue;
    const prefix = key === SCIM_URN.enterprise ? `${key}:` : `${key}.`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, v] of Object.entries(value as ScimJson)) if (!NEVER_LOGGED.has(sub.toLowerCase())) out.set(`${prefix}${sub}`, v);
    } else {
      out.set(key, value);
    }
  }
  return out;
}

/** A value's JSON as compared (absent and null alike); undefined for what JSON cannot hold. */
const jsonOf = (value: unknown): string | undefined => JSON.stringify(value ?? null);

/** A value as kept, from its JSON (jsonOf): as it is when that is short, else the JSON cut (a string ending in …). */
function kept(value: unknown, json: string | undefined): unknown {
  if (value === undefined || value === null || json === undefined) return null;
  return json.length <= VALUE_MAX ? value : cut(json, VALUE_MAX);
}

/** The attributes that differ between two states (null: the resource did not exist before, or no longer does). */
export function attributeChanges(before: ScimJson | null, after: ScimJson | null): Pick<ProvisioningChanges, 'attributes' | 'attributes_total'> {
  const a = flatten(before);
  const b = flatten(after);
  const keys = a.size === 0 ? [...b.keys()] : b.size === 0 ? [...a.keys()] : [...new Set([...a.keys(), ...b.keys()])];
  const changed: AttributeChange[] = [];
  // Each value is serialised once: its JSON both compares the two sides and decides whether it is kept whole.
  for (const key of keys.sort()) {
    const old = a.get(key);
    const next = b.get(key);
    const oldJson = jsonOf(old);
    const nextJson = jsonOf(next);
    if (oldJson !== nextJson) changed.push({ attribute: key, old: kept(old, oldJson), new: kept(next, nextJson) });
  }
  return { attributes: changed.slice(0, ATTRIBUTES_MAX), attributes_total: changed.length };
}

/** A group's members added and removed (SCIM user ids), kept up to MEMBERS_MAX each way. */
export function memberChanges(before: readonly string[], after: readonly string[]): NonNullable<ProvisioningChanges['members']> {
  const added = after.filter((id) => !before.includes(id));
  const removed = before.filter((id) => !after.includes(id));
  return { added: added.slice(0, MEMBERS_MAX), removed: removed.slice(0, MEMBERS_MAX), added_total: added.length, removed_total: removed.length };
}

/**
 * A connection's last hour of SCIM writes calls for the warning when more than this share of them
 * were refused, and at least this many (ScimRefusalWarningService's query reads both).
 */
export const REFUSAL_SHARE = 0.2;
export const REFUSAL_MINIMUM = 20;
