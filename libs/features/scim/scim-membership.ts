import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { DomainError } from '@kernel/core';
import { assignableGroup } from '@features/people';
import { PeopleManagersService, PermissionsService } from '@features/groups';
import { ScimCaller } from './model/scim-caller';
import { invalidValue } from './model/scim-error';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimUserRow } from './model/scim-user-model';
import { ScimUsersRepository } from './scim-users.repository';

const split = (rows: ScimUserRow[]) => ({
  people: rows.filter((r) => r.person_id !== null).map((r) => String(r.person_id)),
  invitations: rows.filter((r) => r.person_id === null && r.inv_id !== null).map((r) => String(r.inv_id)),
});

/**
 * Who is in a group, as SCIM sets it. A person is in at most one group (`people.group_id`); an
 * invited address is placed through its invitation's group (it joins into it). Okta and Entra may
 * push a user in several groups, and send a move (add to the new group, remove from the old) in
 * either order, so each add is recorded as a claim (scim_group_claims) and:
 * - the group that claimed the person first keeps them: an add to another group waits (200,
 *   the person not among its members) — pushing overlapping groups again and again moves no one;
 * - a person whose group does not claim them (placed through REST, or before claims existed) is
 *   moved by the add, as the latest word on them;
 * - a remove withdraws the claim; a person leaving their group goes to the group that claimed
 *   them next (the oldest waiting claim), else to none — so a move ends in the new group in
 *   either order.
 * Changing who is in a group needs `users:write` besides `groups:write` (403 scope_missing
 * otherwise); moving people into a group carrying a code the API may not grant answers 403
 * permission_not_grantable; and, as every change of people's groups, it runs under
 * PeopleManagersService (409 last_people_manager). Written in bulk, in the caller's transaction.
 */
@Injectable()
export class ScimMembership {
  constructor(
    private readonly users: ScimUsersRepository,
    private readonly groups: ScimGroupsRepository,
    private readonly permissions: PermissionsService,
    private readonly managers: PeopleManagersService,
  ) {}

  /**
   * Makes the group's members `after` (SCIM user ids) from `before` (its members and the users
   * waiting on its claims); no difference, nothing checked or written.
   */
  async set(caller: ScimCaller, groupId: string, before: string[], after: string[]): Promise<void> {
    const adding = after.filter((id) => !before.includes(id));
    const removing = before.filter((id) => !after.includes(id));
    if (adding.length === 0 && removing.length === 0) return;
    if (!caller.scopes.includes('users:write')) {
      throw new DomainError('scope_missing', 'Changing the members of a group also needs the scope users:write, which the connection does not hold.');
    }
    const org = caller.organisationId;
    await this.managers.preserving(org, async (m) => {
      const touched = new Set<string>([groupId]);
      if (adding.length > 0) {
        await assignableGroup(m, this.permissions, org, groupId);
        const rows = await this.users.find(m, org, { ids: adding });
        const missing = adding.filter((id) => !rows.some((r) => String(r.id) === id));
        if (missing.length > 0) throw invalidValue(`members: there is no User ${missing.join(', ')} in this organisation.`);
        await this.groups.claim(m, groupId, adding);
        const elsewhere = rows.filter((r) => r.group_id !== null && String(r.group_id) !== groupId);
        const kept = await this.groups.claimedWhereTheyAre(
          m,
          elsewhere.map((r) => ({ userId: String(r.id), groupId: String(r.group_id) })),
        );
        const { people, invitations } = split(rows.filter((r) => !kept.has(String(r.id))));
        (await this.groups.place(m, groupId, people, invitations)).forEach((g) => touched.add(g));
      }
      if (removing.length > 0) {
        await this.groups.unclaim(m, groupId, removing);
        const leaving = (await this.users.find(m, org, { ids: removing })).filter((r) => String(r.group_id) === groupId);
        await this.toNextClaim(m, org, leaving, groupId, touched);
      }
      await this.groups.touch(m, [...touched]);
    });
  }

  /** After a group was deleted: its former members (SCIM user ids) go to the group that claimed them next. */
  async rehome(m: EntityManager, org: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    const touched = new Set<string>();
    await this.toNextClaim(
      m,
      org,
      (await this.users.find(m, org, { ids: userIds })).filter((r) => r.group_id === null),
      null,
      touched,
    );
    await this.groups.touch(m, [...touched]);
  }

  /** Puts people leaving group `from` (or in none) into their earliest standing claim, else none. */
  private async toNextClaim(m: EntityManager, org: string, rows: ScimUserRow[], from: string | null, touched: Set<string>): Promise<void> {
    const next = await this.groups.firstClaims(
      m,
      rows.map((r) => String(r.id)),
    );
    const byTarget = new Map<string | null, ScimUserRow[]>();
    for (const r of rows) {
      const target = await this.fallback(m, org, next.get(String(r.id)) ?? null);
      byTarget.set(target, [...(byTarget.get(target) ?? []), r]);
    }
    for (const [target, list] of byTarget) {
      if (target === null && from === null) continue;
      const { people, invitations } = split(list);
      await this.groups.place(m, target, people, invitations, from ?? undefined);
      if (target !== null) touched.add(target);
    }
  }

  /** The waiting group a leaving person goes to; none when it may not be granted any more (its permissions changed). */
  private async fallback(m: EntityManager, org: string, groupId: string | null): Promise<string | null> {
    if (groupId === null) return null;
    try {
      await assignableGroup(m, this.permissions, org, groupId);
      return groupId;
    } catch (err) {
      if (err instanceof DomainError) return null;
      throw err;
    }
  }
}
