import { DomainError, isId, parseEmail } from '@kernel/core';
import { invalidValue } from './scim-error';
import type { ScimJson } from './scim-patch';
import { SCIM_URN } from './scim-schemas';
import { readExtras, ScimAttributes, ScimExtras } from './scim-user-extras';

export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

/**
 * A SCIM user as read from the database: the scim_users row (the SCIM id and the attributes
 * SCIM keeps) joined with what backs it — the member (people) or, until they join, the latest
 * invitation of the address — and the group either names.
 */
export interface ScimUserRow {
  id: string;
  organisation_id: string;
  email_key: string;
  external_id: string | null;
  given_name: string | null;
  family_name: string | null;
  formatted_name: string | null;
  employee_number: string | null;
  department: string | null;
  manager_id: string | null;
  emails: ScimEmail[] | null;
  /** What SCIM wrote beyond the platform's fields; null when SCIM never wrote this user. */
  attributes: ScimAttributes | null;
  deactivated: boolean;
  created_at: Date;
  updated_at: Date;
  person_id: string | null;
  person_email: string | null;
  person_name: string | null;
  person_title: string | null;
  person_disabled: boolean | null;
  person_updated_at: Date | null;
  inv_id: string | null;
  inv_email: string | null;
  inv_name: string | null;
  inv_title: string | null;
  inv_status: 'pending' | 'accepted' | 'withdrawn' | null;
  inv_group_id: string | null;
  inv_created_at: Date | null;
  inv_answered_at: Date | null;
  group_id: string | null;
  group_name: string | null;
}

/** What SCIM can write about a user, read from a resource representation and checked. */
export interface UserFields {
  userName: string;
  externalId: string | null;
  givenName: string | null;
  familyName: string | null;
  formatted: string | null;
  displayName: string | null;
  title: string | null;
  /** Undefined: not given (a PUT without `active` keeps the state). */
  active: boolean | undefined;
  emails: ScimEmail[] | null;
  employeeNumber: string | null;
  department: string | null;
  managerId: string | null;
  extras: ScimExtras;
}

const obj = (v: unknown): ScimJson => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as ScimJson) : {});
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

export const isMember = (row: ScimUserRow): boolean => row.person_id !== null;
/** The name the platform shows: the member's, or the invitation's until they join. */
export const platformNameOf = (row: ScimUserRow): string | null => text(isMember(row) ? row.person_name : row.inv_name);
export const titleOf = (row: ScimUserRow): string | null => text(isMember(row) ? row.person_title : row.inv_title);
export const addressOf = (row: ScimUserRow): string => row.person_email ?? row.inv_email ?? row.email_key;
/** Members: not disabled. Invited addresses: active while the invitation is pending. */
export const activeOf = (row: ScimUserRow): boolean => (isMember(row) ? !row.person_disabled : row.inv_status === 'pending');

/**
 * The editable state of a user, as the PATCH engine works on it: the values as stored, nothing
 * derived (a derived `name.formatted` or default `emails` would otherwise be written back as if
 * the client had sent them).
 */
export function userState(row: ScimUserRow): ScimJson {
  const extras = row.attributes;
  const name: ScimJson = { ...extras?.name };
  if (row.formatted_name !== null) name.formatted = row.formatted_name;
  if (row.family_name !== null) name.familyName = row.family_name;
  if (row.given_name !== null) name.givenName = row.given_name;
  const enterprise: ScimJson = { ...extras?.enterprise };
  if (row.employee_number !== null) enterprise.employeeNumber = row.employee_number;
  if (row.department !== null) enterprise.department = row.department;
  if (row.manager_id !== null) enterprise.manager = { value: row.manager_id };
  const displayName = displayNameOf(row);
  const title = titleOf(row);
  return {
    schemas: Object.keys(enterprise).length > 0 ? [SCIM_URN.user, SCIM_URN.enterprise] : [SCIM_URN.user],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: addressOf(row),
    ...(Object.keys(name).length > 0 ? { name } : {}),
    ...(displayName !== null ? { displayName } : {}),
    ...(title !== null ? { title } : {}),
    active: activeOf(row),
    ...(row.emails !== null && row.emails.length > 0 ? { emails: row.emails } : {}),
    ...extras?.core,
    ...(Object.keys(enterprise).length > 0 ? { [SCIM_URN.enterprise]: enterprise } : {}),
  };
}

/**
 * SCIM's displayName as it last wrote it (removed included) while the platform's name is still
 * the one that write made; else, and for a user SCIM never wrote, the platform's name (a rename
 * on the platform shows).
 */
function displayNameOf(row: ScimUserRow): string | null {
  const platform = platformNameOf(row);
  const written = row.attributes;
  return written && text(written.platformName) === platform ? text(written.displayName) : platform;
}

/**
 * The SCIM User answered: the state plus what is derived or read-only (groups, $refs, meta).
 * `groupNames`: the group's name is shown only to a caller that may read groups (groups:read).
 */
export function presentUser(row: ScimUserRow, baseUrl: string, groupNames = true): ScimJson {
  const state = userState(row);
  const location = `${baseUrl}/scim/v2/Users/${row.id}`;
  const name = { ...obj(state.name) };
  // Derived only for a user SCIM never wrote: for the others, what was written is answered, no more
  // (Entra re-sends a PATCH every cycle while an answer holds a value it removed).
  const written = row.attributes !== null;
  if (name.formatted === undefined && !written) {
    const joined = [row.given_name, row.family_name].filter((p) => p !== null).join(' ');
    const formatted = joined || platformNameOf(row);
    if (formatted) name.formatted = formatted;
  }
  const enterprise = { ...obj(state[SCIM_URN.enterprise]) };
  if (row.manager_id !== null) enterprise.manager = { value: row.manager_id, $ref: `${baseUrl}/scim/v2/Users/${row.manager_id}` };
  const modified = [row.updated_at, row.person_updated_at, row.inv_created_at, row.inv_answered_at]
    .filter((d): d is Date => d instanceof Date)
    .reduce((a, b) => (b > a ? b : a));
  const { schemas, id, externalId, userName, displayName, title, active, name: _name, emails, [SCIM_URN.enterprise]: _enterprise, ...extras } = state;
  const defaultEmails = written ? undefined : [{ value: userName, type: 'work', primary: true }];
  return {
    schemas,
    id,
    ...(externalId !== undefined ? { externalId } : {}),
    userName,
    ...(Object.keys(name).length > 0 ? { name } : {}),
    ...(displayName !== undefined ? { displayName } : {}),
    ...(title !== undefined ? { title } : {}),
    active,
    ...((emails ?? defaultEmails) !== undefined ? { emails: emails ?? defaultEmails } : {}),
    ...extras,
    groups:
      row.group_id !== null
        ? [{ value: row.group_id, $ref: `${baseUrl}/scim/v2/Groups/${row.group_id}`, ...(groupNames ? { display: row.group_name } : {}), type: 'direct' }]
        : [],
    ...(Object.keys(enterprise).length > 0 ? { [SCIM_URN.enterprise]: enterprise } : {}),
    meta: { resourceType: 'User', created: row.created_at.toISOString(), lastModified: modified.toISOString(), location },
  };
}

function address(value: unknown, field: string): string {
  try {
    return parseEmail(String(value ?? ''), field).address;
  } catch (err) {
    if (err instanceof DomainError) throw invalidValue(`${field}: must be an email address such as name@example.com.`);
    throw err;
  }
}

/** Reads and checks the writable attributes of a user representation (after a PATCH or from a body). */
export function userFields(state: ScimJson): UserFields {
  if (typeof state.userName !== 'string' || state.userName.trim() === '') throw invalidValue('userName: is required.');
  const userName = address(state.userName, 'userName');
  const name = obj(state.name);
  const enterprise = obj(state[SCIM_URN.enterprise]);
  const manager = obj(enterprise.manager);
  const managerId = text(manager.value);
  if (managerId !== null && !isId(managerId)) throw invalidValue(`${SCIM_URN.enterprise}:manager.value: must be the id of a User.`);
  // An element whose value is "" or null is no address (Entra's null update), not a bad one.
  const blank = (e: ScimJson) => e.value === null || (typeof e.value === 'string' && e.value.trim() === '');
  const emails = Array.isArray(state.emails)
    ? (state.emails as ScimJson[]).flatMap((e, i): ScimEmail[] => {
        if (blank(e)) return [];
        if (e.value === undefined) throw invalidValue(`emails[${i}].value: is required.`);
        return [
          {
            value: address(e.value, `emails[${i}].value`),
            ...(text(e.type) !== null ? { type: text(e.type) as string } : {}),
            ...(typeof e.primary === 'boolean' ? { primary: e.primary } : {}),
          },
        ];
      })
    : null;
  if (emails && emails.length > 20) throw invalidValue('emails: at most 20 addresses.');
  return {
    userName,
    externalId: text(state.externalId),
    givenName: text(name.givenName),
    familyName: text(name.familyName),
    formatted: text(name.formatted),
    displayName: text(state.displayName),
    title: text(state.title),
    active: typeof state.active === 'boolean' ? state.active : undefined,
    emails: emails && emails.length > 0 ? emails : null,
    employeeNumber: text(enterprise.employeeNumber),
    department: text(enterprise.department),
    managerId,
    extras: readExtras(state, name, enterprise, SCIM_URN.enterprise),
  };
}

/**
 * The one name the platform keeps for a person, from SCIM's several: displayName, else
 * name.formatted, else given and family name joined; null when none is given (keep the name).
 */
export function platformName(f: UserFields): string | null {
  return f.displayName ?? f.formatted ?? ([f.givenName, f.familyName].filter((p) => p !== null).join(' ') || null);
}

/**
 * Search keys of the email values SCIM wrote, for `emails.value eq` (`*addr`) and
 * `emails[type eq "t"].value eq` (`t|addr`), lowercased. No emails: no keys, as such a user
 * answers no `emails` (a user SCIM never wrote has its sign-in address as work email, keyed so by
 * the trigger that made its row).
 */
export function emailKeys(emails: ScimEmail[] | null): string[] {
  const keys = new Set<string>();
  for (const e of emails ?? []) {
    const v = e.value.toLowerCase();
    keys.add(`*${v}`);
    if (e.type) keys.add(`${e.type.toLowerCase()}|${v}`);
  }
  return [...keys];
}
