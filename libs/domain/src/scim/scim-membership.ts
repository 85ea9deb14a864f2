import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { assignableGroup } from '../people/group-assignment';
import { PeopleManagersGuard } from '../permissions/people-managers.guard';
import { PermissionsService } from '../permissions/permissions.service';
import { ScimCaller } from './scim-caller';
import { invalidValue } from './scim-error';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimUserRow } from './scim-user-model';
import { ScimUsersRepository } from './scim-users.repository';

const split = (rows: ScimUserRow[]) => ({
  people: rows.filter((r) => r.person_id !== null).map((r) => String(r.person_id)),
  invitations: rows.filter((r) => r.person_id === null && r.inv_id !== null).map((r) => String(r.inv_id)),
});

/**
 * Who is in a group, as SCIM sets it. A person is in at most one group (`people.group_id`), so
 * adding a member moves them out of any other group; an invited address is placed through its
 * invitation's group (it joins into it). Changing who is in a group needs `users:write` besides
 * `groups:write` (403 scope_missing otherwise); moving people into a group carrying a code the API
 * may not grant answers 403 permission_not_grantable; and, as every change of people's groups,
 * it runs under PeopleManagersGuard (409 last_people_manager). Written in bulk, in the caller's
 * transaction.
 */
@Injectable()
export class ScimMembership {
  constructor(
    private readonly users: ScimUsersRepository,
    private readonly groups: ScimGroupsRepository,
    private readonly permissions: PermissionsService,
    private readonly managers: PeopleManagersGuard,
  ) {}

  /** Makes the group's members `after` (SCIM user ids) from `before`; no difference, nothing checked or written. */
  async set(caller: ScimCaller, groupId: string, before: string[], after: string[]): Promise<void> {
    const adding = after.filter((id) => !before.includes(id));
    const removing = before.filter((id) => !after.includes(id));
    if (adding.length === 0 && removing.length === 0) return;
    if (!caller.scopes.includes('users:write')) {
      throw new DomainError('scope_missing', 'Changing the members of a group also needs the scope users:write, which the connection does not hold.');
    }
    const org = caller.organisationId;
    await this.managers.preserving(org, async (m) => {
      const left = new Set<string>([groupId]);
      if (adding.length > 0) {
        await assignableGroup(m, this.permissions, org, groupId);
        const rows = await this.users.find(m, org, { ids: adding });
        const missing = adding.filter((id) => !rows.some((r) => String(r.id) === id));
        if (missing.length > 0) throw invalidValue(`members: there is no User ${missing.join(', ')} in this organisation.`);
        const { people, invitations } = split(rows);
        (await this.groups.place(m, groupId, people, invitations)).forEach((g) => left.add(g));
      }
      if (removing.length > 0) {
        const { people, invitations } = split(await this.users.find(m, org, { ids: removing }));
        await this.groups.place(m, null, people, invitations, groupId);
      }
      await this.groups.touch(m, [...left]);
    });
  }
}
