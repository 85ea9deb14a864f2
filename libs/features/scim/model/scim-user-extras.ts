import { invalidValue } from './scim-error';
import type { ScimJson } from './scim-patch';

/** Core attributes the platform has no field for, kept as written (see KEPT_USER_ATTRIBUTES). */
const CORE = [
  'nickName',
  'profileUrl',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
  'phoneNumbers',
  'ims',
  'photos',
  'addresses',
  'entitlements',
  'roles',
];
const NAME = ['middleName', 'honorificPrefix', 'honorificSuffix'];
const ENTERPRISE = ['costCenter', 'organization', 'division'];
const MAX_VALUES = 20;

/** What SCIM wrote that the platform has no field for, beside the person (scim_users.attributes). */
export interface ScimExtras {
  core: ScimJson;
  name: ScimJson;
  enterprise: ScimJson;
}

/**
 * The scim_users.attributes column: the extras, and what SCIM last wrote as `displayName` with
 * the platform name it made of it. Null on a row SCIM never wrote (a person added another way).
 */
export interface ScimAttributes extends ScimExtras {
  displayName: string | null;
  /** The platform's name right after SCIM's last write: a different one now means it was renamed elsewhere. */
  platformName: string | null;
}

/** A value worth keeping: not null, not a blank string, not an empty list. */
const present = (v: unknown): boolean => v !== null && v !== undefined && !(typeof v === 'string' && v.trim() === '') && !(Array.isArray(v) && v.length === 0);

function pick(from: ScimJson, names: string[], where: string): ScimJson {
  const out: ScimJson = {};
  for (const n of names) {
    const v = from[n];
    if (!present(v)) continue;
    if (Array.isArray(v) && v.length > MAX_VALUES) throw invalidValue(`${where}${n}: at most ${MAX_VALUES} values.`);
    out[n] = v;
  }
  return out;
}

/** The extras of a user representation (values already checked by the PATCH engine against the schema). */
export function readExtras(state: ScimJson, name: ScimJson, enterprise: ScimJson, enterpriseUrn: string): ScimExtras {
  return { core: pick(state, CORE, ''), name: pick(name, NAME, 'name.'), enterprise: pick(enterprise, ENTERPRISE, `${enterpriseUrn}:`) };
}
