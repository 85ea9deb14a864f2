import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { UserCondition } from './model/scim-filter';
import { emailKeys, ScimUserRow, UserFields } from './model/scim-user-model';
import type { ScimAttributes } from './model/scim-user-extras';
import { isId } from '@kernel/core';
import { FreshStatistics, PreparedStatements } from '@kernel/database';
import type { ScimSlice } from './scim-walks';

/**
 * SCIM users in SQL. A SCIM user is a scim_users row — an address in an organisation, with the
 * SCIM id and the attributes only SCIM keeps — backed by the member with that address or, until
 * they join, by the latest invitation of the address. Rows are made by database triggers when a
 * person joins or an invitation is made (whatever door they came through), so every member and
 * invitation has a SCIM id and the id stays when the invitation turns into the member. A row is
 * live (listed, readable) while its address is a member, has a pending invitation, or was
 * deactivated through SCIM before accepting (its invitation withdrawn, `deactivated` set).
 */
const JOINS = `
  LEFT JOIN people p ON lower(p.email) = s.email_key AND p.organisation_id = s.organisation_id
  LEFT JOIN LATERAL (
    SELECT i.* FROM invitations i
     WHERE p.id IS NULL AND i.organisation_id = s.organisation_id AND lower(i.email) = s.email_key
     ORDER BY i.id DESC LIMIT 1
  ) i ON true`;
const FROM = `
  FROM scim_users s ${JOINS}`;

/** The displayName answered (see displayNameOf in scim-user-model): SCIM's while the platform's name is the one SCIM's last write made. */
const DISPLAY_NAME = `(CASE WHEN s.attributes IS NOT NULL
    AND NULLIF(btrim(s.attributes->>'platformName'), '') IS NOT DISTINCT FROM NULLIF(btrim(COALESCE(p.name, i.name)), '')
  THEN s.attributes->>'displayName' ELSE COALESCE(p.name, i.name) END)`;

/** The tables a list of users reads. */
const USER_TABLES = ['scim_users', 'people', 'invitations', 'groups'];

const LIVE = `(p.id IS NOT NULL OR i.status = 'pending' OR (s.deactivated AND i.status = 'withdrawn'))`;

const COLUMNS = `
  s.id, s.organisation_id, s.email_key, s.external_id, s.given_name, s.family_name, s.formatted_name,
  s.employee_number, s.department, s.manager_id, s.emails, s.attributes, s.deactivated, s.created_at, s.updated_at,
  p.id AS person_id, p.email AS person_email, p.name AS person_name, p.job_title AS person_title,
  p.disabled AS person_disabled, p.updated_at AS person_updated_at,
  i.id AS inv_id, i.email AS inv_email, i.name AS inv_name, i.job_title AS inv_title, i.status AS inv_status,
  i.group_id AS inv_group_id, i.created_at AS inv_created_at, i.answered_at AS inv_answered_at,
  g.id AS group_id, g.name AS group_name`;

/** What saveAttributes writes: $2..$11 (see saveParams). */
const SAVE_SET = `external_id = $2, given_name = $3, family_name = $4, formatted_name = $5, employee_number = $6,
  department = $7, manager_id = $8, emails = $9::jsonb, email_keys = $10::text[], attributes = $11::jsonb, updated_at = now()`;

/** The parameters $2..$11 of SAVE_SET. */
function saveParams(f: UserFields, platformName: string | null): unknown[] {
  const attributes: ScimAttributes = { ...f.extras, displayName: f.displayName, platformName };
  return [
    f.externalId,
    f.givenName,
    f.familyName,
    f.formatted,
    f.employeeNumber,
    f.department,
    f.managerId,
    f.emails ? JSON.stringify(f.emails) : null,
    emailKeys(f.emails),
    JSON.stringify(attributes),
  ];
}

export interface UserQuery {
  conditions?: UserCondition[];
  ids?: string[];
}

function where(organisationId: string, q: UserQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [organisationId];
  const parts = ['s.organisation_id = $1', LIVE];
  const add = (v: unknown) => `$${params.push(v)}`;
  if (q.ids) parts.push(`s.id = ANY(${add(q.ids)}::bigint[])`);
  for (const c of q.conditions ?? []) {
    if (c.attr === 'userName') parts.push(`s.email_key = lower(${add(c.value)})`);
    else if (c.attr === 'externalId') parts.push(`s.external_id = ${add(c.value)}`);
    else if (c.attr === 'displayName') parts.push(`lower(btrim(${DISPLAY_NAME})) = lower(btrim(${add(c.value)})) AND btrim(${DISPLAY_NAME}) <> ''`);
    else if (c.attr === 'email')
      parts.push(`s.email_keys @> ARRAY[${add(c.type ? `${c.type.toLowerCase()}|${c.value.toLowerCase()}` : `*${c.value.toLowerCase()}`)}]::text[]`);
  }
  return { sql: parts.join(' AND '), params };
}

/** One user by id, read back after a write (a create reads its own: SAVE_OF) and locked by one: named statements (see PreparedStatements). */
const GET = (lock: boolean) =>
  `SELECT ${COLUMNS} ${FROM} LEFT JOIN groups g ON g.id = COALESCE(p.group_id, i.group_id)
    WHERE s.organisation_id = $1 AND ${LIVE} AND s.id = $2::bigint${lock ? ' FOR UPDATE OF s' : ''}`;

/**
 * saveAttributesOf: the write and the user it leaves in one statement. The scim_users columns are the
 * UPDATE's RETURNING (its new values); the member, invitation and group are read as GET reads them
 * (no trigger on scim_users changes them), so the row is what GET would answer next.
 */
const SAVE_OF = `WITH s AS (UPDATE scim_users SET ${SAVE_SET} WHERE organisation_id = $1 AND email_key = lower($12) RETURNING *)
  SELECT ${COLUMNS}, ${LIVE} AS live FROM s ${JOINS} LEFT JOIN groups g ON g.id = COALESCE(p.group_id, i.group_id)`;

@Injectable()
export class ScimUsersRepository {
  /**
   * A create's check, the reads of one user and the lookups identity providers make run as named
   * prepared statements (on the transaction's connection when there is one): planning the check is
   * a large part of what a create costs Postgres (`bench/scim.bench.js` measures it).
   */
  constructor(
    private readonly statements: PreparedStatements,
    private readonly statistics: FreshStatistics,
  ) {}

  /**
   * Live users matching the query, by id ascending (a stable order for startIndex paging): `limit`
   * of them after the user with id `after` when given (an index range on (organisation_id, id),
   * as cheap deep in the list as at its start; see ScimWalks), else after skipping `offset`.
   */
  async find(m: EntityManager, organisationId: string, q: UserQuery, page?: ScimSlice): Promise<ScimUserRow[]> {
    const w = where(organisationId, q);
    const params = [...w.params];
    const limit = page ? ` LIMIT $${params.push(Math.max(0, Math.floor(page.limit)))}` : '';
    const after = page?.after !== undefined ? ` AND s.id > $${params.push(page.after)}::bigint` : '';
    const offset = page && page.after === undefined ? ` OFFSET $${params.push(Math.max(0, Math.floor(page.offset)))}` : '';
    const text = `SELECT ${COLUMNS} ${FROM} LEFT JOIN groups g ON g.id = COALESCE(p.group_id, i.group_id) WHERE ${w.sql}${after} ORDER BY s.id${limit}${offset}`;
    // The lookups an identity provider makes before each create (Okta's and Entra's `userName eq`,
    // `externalId eq`), each backed by a unique index whatever the value, are named: one statement per
    // attribute (where() writes the same SQL for every value). Other filters go unnamed, so no client
    // can fill a connection with prepared statements.
    const only = q.conditions?.length === 1 && !q.ids ? q.conditions[0].attr : undefined;
    if (only === 'userName' || only === 'externalId') {
      return this.statements.queryIn<ScimUserRow>(m, `scim-users-find-${only}${!page ? '' : after ? '-after' : '-page'}`, text, params);
    }
    // A list joins every matching row's member and invitation: planned for stale statistics (just
    // after a bulk load) it can be many times slower. Lookups by a unique attribute (above) cannot.
    if (page) await this.statistics.ensure(USER_TABLES);
    return m.query(text, params);
  }

  async count(m: EntityManager, organisationId: string, q: UserQuery): Promise<number> {
    await this.statistics.ensure(USER_TABLES);
    if (!q.ids && !q.conditions?.length) return this.countAll(m, organisationId);
    const w = where(organisationId, q);
    const [row] = await m.query(`SELECT count(*)::int AS n ${FROM} WHERE ${w.sql}`, w.params);
    return row.n as number;
  }

  /**
   * Every live user, counted from the tables that back them rather than row by row (Okta's import
   * asks for it with every page): the members (each has a row, the triggers see to it), the
   * pending invitations of addresses that are not members, and the rows deactivated while invited.
   */
  private async countAll(m: EntityManager, organisationId: string): Promise<number> {
    const [row] = await m.query(
      `SELECT (SELECT count(*) FROM people WHERE organisation_id = $1)
            + (SELECT count(*) FROM invitations i WHERE i.organisation_id = $1 AND i.status = 'pending'
                  AND NOT EXISTS (SELECT 1 FROM people p WHERE lower(p.email) = lower(i.email) AND p.organisation_id = $1))
            + (SELECT count(*) ${FROM} WHERE s.organisation_id = $1 AND s.deactivated AND p.id IS NULL AND i.status = 'withdrawn') AS n`,
      [organisationId],
    );
    return Number(row.n);
  }

  /** One live user; `lock` row-locks its scim_users row so concurrent writes to it queue. */
  async get(m: EntityManager, organisationId: string, id: string, lock = false): Promise<ScimUserRow | null> {
    if (!isId(id)) return null;
    const rows = await this.statements.queryIn<ScimUserRow>(m, lock ? 'scim-user-get-locked' : 'scim-user-get', GET(lock), [organisationId, id]);
    return rows[0] ?? null;
  }

  /**
   * A create's checks in one statement: whether the address is a live user here, and whether
   * `externalId` (if given) is held by a live user. When neither is, it also forgets what no
   * member or invitation backs any longer (the address's row, so the create gets a new
   * id; and the externalId of rows no longer live); when either is, it changes nothing.
   */
  async checkCreate(
    m: EntityManager,
    organisationId: string,
    address: string,
    externalId: string | null,
  ): Promise<{ addressTaken: boolean; externalIdTaken: boolean }> {
    const [row] = await this.statements.queryIn<{ address: boolean; external_id: boolean }>(
      m,
      'scim-user-check-create',
      `WITH addr AS (SELECT s.id, ${LIVE} AS live ${FROM} WHERE s.organisation_id = $1 AND s.email_key = lower($2)),
            ext AS (SELECT s.id, ${LIVE} AS live ${FROM} WHERE $3::text IS NOT NULL AND s.organisation_id = $1 AND s.external_id = $3::text),
            taken AS (SELECT EXISTS (SELECT 1 FROM addr WHERE live) AS address, EXISTS (SELECT 1 FROM ext WHERE live) AS external_id),
            dropped AS (DELETE FROM scim_users WHERE id IN (SELECT id FROM addr) AND NOT (SELECT address OR external_id FROM taken)),
            freed AS (UPDATE scim_users SET external_id = NULL
                       WHERE id IN (SELECT id FROM ext) AND id NOT IN (SELECT id FROM addr) AND NOT (SELECT address OR external_id FROM taken))
       SELECT address, external_id FROM taken`,
      [organisationId, address, externalId],
    );
    return { addressTaken: row.address === true, externalIdTaken: row.external_id === true };
  }

  /**
   * Writes the attributes (saveAttributes) of the scim_users row of an address, live or not, and reads
   * the user back in the same statement: its id and the user (`row`, null when not live), or null
   * when the address has no row.
   */
  async saveAttributesOf(
    m: EntityManager,
    organisationId: string,
    address: string,
    f: UserFields,
    platformName: string | null,
  ): Promise<{ id: string; row: ScimUserRow | null } | null> {
    const [found] = await this.statements.queryIn<ScimUserRow & { live: boolean }>(m, 'scim-user-save-of', SAVE_OF, [
      organisationId,
      ...saveParams(f, platformName),
      address,
    ]);
    if (!found) return null;
    const { live, ...row } = found;
    return { id: String(row.id), row: live ? row : null };
  }

  async delete(m: EntityManager, id: string): Promise<void> {
    await m.query(`DELETE FROM scim_users WHERE id = $1`, [id]);
  }

  /**
   * Writes the attributes SCIM keeps (all of them: what a field says, null included), with
   * `platformName`, the platform's name once this write is done (see ScimAttributes).
   */
  async saveAttributes(m: EntityManager, id: string, f: UserFields, platformName: string | null): Promise<void> {
    await m.query(`UPDATE scim_users SET ${SAVE_SET} WHERE id = $1`, [id, ...saveParams(f, platformName)]);
  }

  async setDeactivated(m: EntityManager, id: string, deactivated: boolean): Promise<void> {
    await m.query(`UPDATE scim_users SET deactivated = $2, updated_at = now() WHERE id = $1`, [id, deactivated]);
  }

  async touch(m: EntityManager, id: string): Promise<void> {
    await m.query(`UPDATE scim_users SET updated_at = now() WHERE id = $1`, [id]);
  }

  /**
   * Whether `externalId` is free for user `exceptId` in the organisation. A row no longer live
   * (its person removed through REST) gives its externalId up rather than block a new user.
   */
  async externalIdFree(m: EntityManager, organisationId: string, externalId: string, exceptId: string | null): Promise<boolean> {
    const holders: Array<{ id: string; live: boolean }> = await m.query(
      `SELECT s.id, ${LIVE} AS live ${FROM} WHERE s.organisation_id = $1 AND s.external_id = $2 AND s.id IS DISTINCT FROM $3::bigint`,
      [organisationId, externalId, exceptId],
    );
    if (holders.some((h) => h.live)) return false;
    if (holders.length > 0) await m.query(`UPDATE scim_users SET external_id = NULL WHERE id = ANY($1::bigint[])`, [holders.map((h) => h.id)]);
    return true;
  }
}
