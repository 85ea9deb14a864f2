import { Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { EntityManager } from 'typeorm';
import { DomainError, notFound } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { GroupNameTakenError, PG_UNIQUE_VIOLATION, pgCode, PeopleManagersService, GroupsService } from '@features/groups';
import { ScimCaller, ScimList, ScimPage } from './model/scim-caller';
import { uniqueness } from './model/scim-error';
import { parseGroupFilter } from './model/scim-filter';
import { GroupFields, groupFields, groupState, presentGroup, ScimGroupRow, ScimMemberRow } from './model/scim-group-model';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimMembership } from './scim-membership';
import { ScimWalks } from './scim-walks';
import { applyScimPatch, ScimJson, readScimResource } from './model/scim-patch';
import { GROUP_RESOURCE } from './model/scim-schemas';
import { attributeChanges, memberChanges, ProvisioningChanges } from './model/provisioning-event';
import { ProvisioningLogService } from './provisioning-log.service';

const nameTaken = (name: string) =>
  uniqueness(`displayName: "${name}" is already the name of a group in this organisation (names are compared ignoring case).`);
const hasKey = (body: unknown, key: string) =>
  body !== null && typeof body === 'object' && Object.keys(body).some((k) => k.toLowerCase() === key.toLowerCase());

/**
 * What a group write changed: its name and externalId (old → new), and the members the client
 * added and removed (`before`: undefined when the write left the members alone).
 */
function groupChanges(row: ScimGroupRow | null, next: GroupFields, before: string[] | undefined, after: string[] = next.members): ProvisioningChanges {
  const is = { displayName: next.displayName, ...(next.externalId !== null ? { externalId: next.externalId } : {}) };
  const changes: ProvisioningChanges = attributeChanges(row ? groupState(row) : null, is);
  if (before !== undefined) changes.members = memberChanges(before, after);
  return changes;
}

/**
 * SCIM Groups: the organisation's groups. Created through SCIM a group holds no permissions
 * (GroupsService, so names stay unique ignoring case and deletion keeps its rules); members are
 * set through ScimMembership. Every write, a PATCH of many operations included, is one
 * transaction: if anything fails, nothing is changed. Writes to an existing group take the
 * organisation lock first (PeopleManagersService), then the group's row, in the order REST does.
 */
@Injectable()
export class ScimGroupsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly repo: ScimGroupsRepository,
    private readonly walks: ScimWalks,
    private readonly groups: GroupsService,
    private readonly membership: ScimMembership,
    private readonly managers: PeopleManagersService,
    private readonly config: AppConfig,
    private readonly log: ProvisioningLogService,
  ) {}

  async list(caller: ScimCaller, filter: string | undefined, page: ScimPage, withMembers: boolean): Promise<ScimList<ScimJson>> {
    const org = caller.organisationId;
    const conditions = filter === undefined ? [] : parseGroupFilter(filter);
    const m = this.tx.manager;
    const walk = { organisationId: org, connectionId: caller.connectionId, resource: 'Groups' as const, signature: `${JSON.stringify(conditions)} by id` };
    const { totalResults, rows } = await this.walks.page(walk, page, {
      find: (slice) => this.repo.find(m, org, conditions, slice),
      count: () => this.repo.count(m, org, conditions),
      keyOf: (r) => String(r.id),
    });
    const members = withMembers
      ? await this.repo.members(
          m,
          org,
          rows.map((r) => String(r.id)),
        )
      : undefined;
    return { totalResults, startIndex: page.startIndex, items: rows.map((r) => this.present(caller, r, members)) };
  }

  async get(caller: ScimCaller, id: string, withMembers: boolean): Promise<ScimJson> {
    return this.read(this.tx.manager, caller, id, withMembers);
  }

  async create(caller: ScimCaller, body: unknown): Promise<ScimJson> {
    const next = groupFields(readScimResource(body, GROUP_RESOURCE));
    const org = caller.organisationId;
    return this.log.written((record) =>
      this.tx.run(async (m) => {
        if (await this.repo.nameTaken(m, org, next.displayName, null)) throw nameTaken(next.displayName);
        if (next.externalId !== null && (await this.repo.externalIdTaken(m, org, next.externalId, null))) throw this.externalIdTaken(next.externalId);
        const group = await this.groups.create(org, { name: next.displayName, permissions: [] }).catch(this.translateName(next.displayName));
        await this.setExternalId(m, org, group.id, next.externalId);
        await this.membership.set(caller, group.id, [], next.members);
        const changes = groupChanges(null, next, [], next.members);
        await record(m, caller, { operation: 'create', resourceType: 'Group', resourceId: String(group.id), status: 201, changes });
        return this.read(m, caller, group.id, true);
      }),
    );
  }

  /** PUT: name and externalId replaced; members replaced when the body names them, kept otherwise. */
  async replace(caller: ScimCaller, id: string, body: unknown): Promise<ScimJson> {
    const next = groupFields(readScimResource(body, GROUP_RESOURCE));
    return this.log.written((record) =>
      this.managers.preserving(caller.organisationId, async (m) => {
        const row = await this.load(m, caller.organisationId, id);
        const before = hasKey(body, 'members') ? await this.claimed(m, row, await this.repo.members(m, row.organisation_id, [row.id])) : undefined;
        await this.save(m, caller, row, before, next);
        await record(m, caller, {
          operation: 'replace',
          resourceType: 'Group',
          resourceId: String(row.id),
          status: 200,
          changes: groupChanges(row, next, before),
        });
        return this.read(m, caller, id, true);
      }),
    );
  }

  async patch(caller: ScimCaller, id: string, body: unknown): Promise<ScimJson> {
    return this.log.written((record) =>
      this.managers.preserving(caller.organisationId, async (m) => {
        const row = await this.load(m, caller.organisationId, id);
        const members = await this.repo.members(m, caller.organisationId, [row.id]);
        const before = await this.claimed(m, row, members);
        const next = groupFields(
          applyScimPatch(
            groupState(
              row,
              before.map((user_id) => ({ group_id: row.id, user_id, display: '' })),
            ),
            body,
            GROUP_RESOURCE,
          ),
        );
        await this.save(m, caller, row, before, next);
        await record(m, caller, {
          operation: 'update',
          resourceType: 'Group',
          resourceId: String(row.id),
          status: 200,
          changes: groupChanges(row, next, before),
        });
        return this.read(m, caller, id, true);
      }),
    );
  }

  /**
   * 409 group_holds_cases or last_people_manager as over REST; members keep their accounts, and go
   * to a group whose claim on them was waiting (see ScimMembership), if any.
   */
  async remove(caller: ScimCaller, id: string): Promise<void> {
    const organisationId = caller.organisationId;
    await this.log.written((record) =>
      this.managers.preserving(organisationId, async (m) => {
        const row = await this.repo.get(m, organisationId, id);
        const members = (await this.repo.members(m, organisationId, [id])).map((x) => x.user_id);
        await this.groups.delete(organisationId, id);
        await this.membership.rehome(m, organisationId, members);
        const changes: ProvisioningChanges = { ...attributeChanges(row ? groupState(row) : null, null), members: memberChanges(members, []) };
        await record(m, caller, { operation: 'delete', resourceType: 'Group', resourceId: id, status: 204, changes });
      }),
    );
  }

  private async save(m: EntityManager, caller: ScimCaller, row: ScimGroupRow, before: string[] | undefined, next: GroupFields): Promise<void> {
    const org = caller.organisationId;
    if (next.displayName !== row.name) {
      if (await this.repo.nameTaken(m, org, next.displayName, row.id)) throw nameTaken(next.displayName);
      await this.groups.update(org, row.id, { name: next.displayName }).catch(this.translateName(next.displayName));
    }
    if (next.externalId !== row.external_id) {
      if (next.externalId !== null && (await this.repo.externalIdTaken(m, org, next.externalId, row.id))) throw this.externalIdTaken(next.externalId);
      await this.setExternalId(m, org, row.id, next.externalId);
      await this.repo.touch(m, [row.id]);
    }
    if (before !== undefined) await this.membership.set(caller, row.id, before, next.members);
  }

  /**
   * The members as the provisioning client set them, which a write starts from: those in the group
   * and those its claim waits for (see ScimMembership), so a PUT or a replace without them
   * withdraws the claim and an add of someone else keeps it.
   */
  private async claimed(m: EntityManager, row: ScimGroupRow, members: ScimMemberRow[]): Promise<string[]> {
    const ids = members.map((x) => x.user_id);
    return [...ids, ...(await this.repo.claimants(m, row.id)).filter((id) => !ids.includes(id))];
  }

  private async load(m: EntityManager, organisationId: string, id: string): Promise<ScimGroupRow> {
    const row = await this.repo.get(m, organisationId, id, true);
    if (!row) throw notFound('group');
    return row;
  }

  private async read(m: EntityManager, caller: ScimCaller, id: string, withMembers: boolean): Promise<ScimJson> {
    const row = await this.repo.get(m, caller.organisationId, id);
    if (!row) throw notFound('group');
    return this.present(caller, row, withMembers ? await this.repo.members(m, caller.organisationId, [row.id]) : undefined);
  }

  private present(caller: ScimCaller, row: ScimGroupRow, members: ScimMemberRow[] | undefined): ScimJson {
    const own = members?.filter((x) => x.group_id === String(row.id));
    return presentGroup(row, own, this.config.publicBaseUrl, caller.scopes.includes('users:read'));
  }

  private async setExternalId(m: EntityManager, org: string, groupId: string, externalId: string | null): Promise<void> {
    await this.repo.setExternalId(m, org, groupId, externalId).catch((err: unknown) => {
      throw pgCode(err) === PG_UNIQUE_VIOLATION && externalId !== null ? this.externalIdTaken(externalId) : err;
    });
  }

  private externalIdTaken(externalId: string): DomainError {
    return uniqueness(`externalId: "${externalId}" is already used by another group of this organisation.`);
  }

  /** GroupsService answers a name race lost to a concurrent writer as 422; SCIM says 409 uniqueness. */
  private translateName(name: string) {
    return (err: unknown): never => {
      throw err instanceof GroupNameTakenError ? nameTaken(name) : err;
    };
  }
}
