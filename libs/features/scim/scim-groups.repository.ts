import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { GroupCondition } from './model/scim-filter';
import { ScimGroupRow, ScimMemberRow } from './model/scim-group-model';
import { isId } from '@kernel/core';
import { FreshStatistics } from '@kernel/database';
import type { ScimSlice } from './scim-walks';

function where(organisationId: string, conditions: GroupCondition[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [organisationId];
  const parts = ['g.organisation_id = $1'];
  for (const c of conditions) {
    params.push(c.value);
    parts.push(c.attr === 'displayName' ? `lower(g.name) = lower(btrim($${params.length}))` : `sg.external_id = $${params.length}`);
  }
  return { sql: parts.join(' AND '), params };
}

/** The tables a list of groups reads, its members included. */
const GROUP_TABLES = ['groups', 'scim_groups', 'people', 'invitations', 'scim_users'];

const SELECT = `SELECT g.id, g.organisation_id, g.name, sg.external_id, g.created_at, g.updated_at
  FROM groups g LEFT JOIN scim_groups sg ON sg.group_id = g.id`;

/**
 * SCIM groups in SQL: the organisation's groups, their SCIM externalId (scim_groups), and their
 * members — the people whose group is the group, and the invited addresses whose invitation
 * puts them in it (they join into it), each named by their SCIM user id.
 */
@Injectable()
export class ScimGroupsRepository {
  constructor(private readonly statistics: FreshStatistics) {}

  /** `limit` groups by id ascending: after the group with id `after` when given (see ScimWalks), else after skipping `offset`. */
  async find(m: EntityManager, organisationId: string, conditions: GroupCondition[], page: ScimSlice): Promise<ScimGroupRow[]> {
    await this.statistics.ensure(GROUP_TABLES);
    const w = where(organisationId, conditions);
    const params = [...w.params];
    const limit = `LIMIT $${params.push(Math.max(0, Math.floor(page.limit)))}`;
    if (page.after !== undefined) {
      return m.query(`${SELECT} WHERE ${w.sql} AND g.id > $${params.push(page.after)}::bigint ORDER BY g.id ${limit}`, params);
    }
    return m.query(`${SELECT} WHERE ${w.sql} ORDER BY g.id ${limit} OFFSET $${params.push(Math.max(0, Math.floor(page.offset)))}`, params);
  }

  async count(m: EntityManager, organisationId: string, conditions: GroupCondition[]): Promise<number> {
    await this.statistics.ensure(GROUP_TABLES);
    const w = where(organisationId, conditions);
    const [row] = await m.query(`SELECT count(*)::int AS n FROM groups g LEFT JOIN scim_groups sg ON sg.group_id = g.id WHERE ${w.sql}`, w.params);
    return row.n as number;
  }

  async get(m: EntityManager, organisationId: string, id: string, lock = false): Promise<ScimGroupRow | null> {
    if (!isId(id)) return null;
    const rows: ScimGroupRow[] = await m.query(`${SELECT} WHERE g.organisation_id = $1 AND g.id = $2${lock ? ' FOR UPDATE OF g' : ''}`, [organisationId, id]);
    return rows[0] ?? null;
  }

  /** Whether another group of the organisation has this name, ignoring case. */
  async nameTaken(m: EntityManager, organisationId: string, name: string, exceptId: string | null): Promise<boolean> {
    const rows = await m.query(`SELECT 1 FROM groups WHERE organisation_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3::bigint`, [
      organisationId,
      name,
      exceptId,
    ]);
    return rows.length > 0;
  }

  async externalIdTaken(m: EntityManager, organisationId: string, externalId: string, exceptId: string | null): Promise<boolean> {
    const rows = await m.query(`SELECT 1 FROM scim_groups WHERE organisation_id = $1 AND external_id = $2 AND group_id IS DISTINCT FROM $3::bigint`, [
      organisationId,
      externalId,
      exceptId,
    ]);
    return rows.length > 0;
  }

  async setExternalId(m: EntityManager, organisationId: string, groupId: string, externalId: string | null): Promise<void> {
    if (externalId === null) await m.query(`DELETE FROM scim_groups WHERE group_id = $1`, [groupId]);
    else {
      await m.query(
        `INSERT INTO scim_groups (group_id, organisation_id, external_id) VALUES ($1, $2, $3)
         ON CONFLICT (group_id) DO UPDATE SET external_id = EXCLUDED.external_id`,
        [groupId, organisationId, externalId],
      );
    }
  }

  /** Members of the groups, by SCIM user id. */
  members(m: EntityManager, organisationId: string, groupIds: string[]): Promise<ScimMemberRow[]> {
    if (groupIds.length === 0) return Promise.resolve([]);
    // Ordered by the numeric id (text order would put "10" before "9"): a stable order for clients.
    return m.query(
      `SELECT group_id, user_id, display FROM (
       SELECT p.group_id::text AS group_id, s.id::text AS user_id, COALESCE(NULLIF(btrim(p.name), ''), p.email) AS display
         FROM people p JOIN scim_users s ON s.organisation_id = p.organisation_id AND s.email_key = lower(p.email)
        WHERE p.organisation_id = $1 AND p.group_id = ANY($2::bigint[])
       UNION ALL
       SELECT i.group_id::text, s.id::text, COALESCE(NULLIF(btrim(i.name), ''), i.email)
         FROM invitations i JOIN scim_users s ON s.organisation_id = i.organisation_id AND s.email_key = lower(i.email)
        WHERE i.organisation_id = $1 AND i.group_id = ANY($2::bigint[])
          AND (i.status = 'pending' OR (i.status = 'withdrawn' AND s.deactivated))
          AND NOT EXISTS (SELECT 1 FROM people p WHERE lower(p.email) = s.email_key AND p.organisation_id = i.organisation_id)
          AND i.id = (SELECT max(i2.id) FROM invitations i2 WHERE i2.organisation_id = i.organisation_id AND lower(i2.email) = s.email_key)
       ) m ORDER BY m.user_id::bigint`,
      [organisationId, groupIds],
    );
  }

  /** Puts people and invitations into a group (or, with null, out of `from`); answers the groups they left. */
  async place(m: EntityManager, groupId: string | null, people: string[], invitations: string[], from?: string): Promise<string[]> {
    const left = new Set<string>();
    if (people.length > 0) {
      const rows: Array<{ old: string | null }> = await m
        .query(
          `UPDATE people p SET group_id = $1, updated_at = now() FROM people o
          WHERE p.id = o.id AND p.id = ANY($2::bigint[]) AND p.group_id IS DISTINCT FROM $1::bigint ${from ? 'AND p.group_id = $3' : ''}
          RETURNING o.group_id AS old`,
          from ? [groupId, people, from] : [groupId, people],
        )
        .then((r: [Array<{ old: string | null }>, number]) => r[0]);
      rows.forEach((r) => r.old !== null && left.add(String(r.old)));
    }
    if (invitations.length > 0) {
      const rows: Array<{ old: string | null }> = await m
        .query(
          `UPDATE invitations i SET group_id = $1 FROM invitations o
          WHERE i.id = o.id AND i.id = ANY($2::bigint[]) AND i.group_id IS DISTINCT FROM $1::bigint ${from ? 'AND i.group_id = $3' : ''}
          RETURNING o.group_id AS old`,
          from ? [groupId, invitations, from] : [groupId, invitations],
        )
        .then((r: [Array<{ old: string | null }>, number]) => r[0]);
      rows.forEach((r) => r.old !== null && left.add(String(r.old)));
    }
    return [...left];
  }

  /** Records that the group claims these users (a claim already made keeps its place in line). */
  async claim(m: EntityManager, groupId: string, userIds: string[]): Promise<void> {
    await m.query(
      `INSERT INTO scim_group_claims (user_id, group_id) SELECT u, $1 FROM unnest($2::bigint[]) WITH ORDINALITY AS x(u, n) ORDER BY n
       ON CONFLICT DO NOTHING`,
      [groupId, userIds],
    );
  }

  async unclaim(m: EntityManager, groupId: string, userIds: string[]): Promise<void> {
    await m.query(`DELETE FROM scim_group_claims WHERE group_id = $1 AND user_id = ANY($2::bigint[])`, [groupId, userIds]);
  }

  /** Of these users, the ones their current group claims (SCIM put them there and still wants them). */
  async claimedWhereTheyAre(m: EntityManager, placed: Array<{ userId: string; groupId: string }>): Promise<Set<string>> {
    if (placed.length === 0) return new Set();
    const rows: Array<{ user_id: string }> = await m.query(
      `SELECT c.user_id::text FROM scim_group_claims c JOIN unnest($1::bigint[], $2::bigint[]) AS p(u, g) ON c.user_id = p.u AND c.group_id = p.g`,
      [placed.map((p) => p.userId), placed.map((p) => p.groupId)],
    );
    return new Set(rows.map((r) => r.user_id));
  }

  /** Each user's earliest standing claim, by user id. */
  async firstClaims(m: EntityManager, userIds: string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map();
    const rows: Array<{ user_id: string; group_id: string }> = await m.query(
      `SELECT DISTINCT ON (user_id) user_id::text, group_id::text FROM scim_group_claims WHERE user_id = ANY($1::bigint[]) ORDER BY user_id, id`,
      [userIds],
    );
    return new Map(rows.map((r) => [r.user_id, r.group_id]));
  }

  /** Users the group claims, in claim order (those it holds and those waiting for an earlier claim to end). */
  async claimants(m: EntityManager, groupId: string): Promise<string[]> {
    const rows: Array<{ user_id: string }> = await m.query(`SELECT user_id::text FROM scim_group_claims WHERE group_id = $1 ORDER BY id`, [groupId]);
    return rows.map((r) => r.user_id);
  }

  async touch(m: EntityManager, groupIds: string[]): Promise<void> {
    if (groupIds.length > 0) await m.query(`UPDATE groups SET updated_at = now() WHERE id = ANY($1::bigint[])`, [groupIds]);
  }
}
