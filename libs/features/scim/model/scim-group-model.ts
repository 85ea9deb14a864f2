import { invalidValue } from './scim-error';
import type { ScimJson } from './scim-patch';
import { SCIM_URN } from './scim-schemas';
import { isId } from '@kernel/core';

export interface ScimGroupRow {
  id: string;
  organisation_id: string;
  name: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A member as answered: the member's SCIM user id and the name shown for them. */
export interface ScimMemberRow {
  group_id: string;
  user_id: string;
  display: string;
}

export interface GroupFields {
  displayName: string;
  externalId: string | null;
  /** SCIM user ids, deduplicated, in the order given. */
  members: string[];
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The editable state of a group for the PATCH engine. `members` only when they were loaded. */
export function groupState(row: ScimGroupRow, members?: ScimMemberRow[]): ScimJson {
  return {
    schemas: [SCIM_URN.group],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.name,
    ...(members && members.length > 0 ? { members: members.map((m) => ({ value: m.user_id })) } : {}),
  };
}

/** `memberNames`: members' names are shown only to a caller that may read users (users:read). */
export function presentGroup(row: ScimGroupRow, members: ScimMemberRow[] | undefined, baseUrl: string, memberNames = true): ScimJson {
  return {
    schemas: [SCIM_URN.group],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    displayName: row.name,
    ...(members
      ? {
          members: members.map((m) => ({
            value: m.user_id,
            $ref: `${baseUrl}/scim/v2/Users/${m.user_id}`,
            ...(memberNames ? { display: m.display } : {}),
            type: 'User',
          })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${baseUrl}/scim/v2/Groups/${row.id}`,
    },
  };
}

/** Reads and checks the writable attributes of a group representation. */
export function groupFields(state: ScimJson): GroupFields {
  const displayName = text(state.displayName);
  if (displayName === null) throw invalidValue('displayName: is required.');
  const list = Array.isArray(state.members) ? (state.members as ScimJson[]) : [];
  const members = list.map((m, i) => {
    const value = typeof m.value === 'string' ? m.value.trim() : '';
    if (!isId(value)) throw invalidValue(`members[${i}].value: must be the id of a User.`);
    if (m.type !== undefined && String(m.type).toLowerCase() !== 'user')
      throw invalidValue(`members[${i}].type: only User members are supported (groups do not nest).`);
    return value;
  });
  return { displayName, externalId: text(state.externalId), members: [...new Set(members)] };
}
