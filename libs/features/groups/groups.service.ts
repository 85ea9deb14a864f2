import { Injectable } from '@nestjs/common';
import { EntityManager, SelectQueryBuilder } from 'typeorm';
import { DomainError, isId, notFound, validationFailed } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { PeopleManagersService } from './people-managers.service';
import { PermissionsService } from './permissions.service';
import { GroupEntity } from './group.entity';
import { codeNotRemovable, groupHoldsCases, groupNameTaken, PG_FOREIGN_KEY_VIOLATION, PG_UNIQUE_VIOLATION, pgCode } from './model/groups.errors';

export type GroupCreateInput = { name: string; permissions?: string[] };
/** Fields left undefined are kept; `permissions`, when given, replace the list. */
export type GroupUpdateInput = { name?: string; permissions?: string[] };

const sameCodes = (a: string[], b: string[]) => [...a].sort().join(',') === [...b].sort().join(',');

/**
 * Groups of an organisation and their permission codes, as a connection may change them.
 * Every change to an existing group runs under PeopleManagersService: the organisation lock
 * serialises them, and a change that leaves no one able to manage people, or no owner, is
 * refused (last_people_manager). Codes are checked by PermissionsService (unknown_permission,
 * permission_not_grantable). A person's group is `people.group_id`: a group's members are the
 * people pointing at it, so deleting a group leaves them without one and keeps their accounts.
 */
@Injectable()
export class GroupsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly permissions: PermissionsService,
    private readonly managers: PeopleManagersService,
  ) {}

  /** The organisation's groups, for the edge to page newest first on (created_at, id). */
  listQuery(organisationId: string): SelectQueryBuilder<GroupEntity> {
    return this.tx.manager.getRepository(GroupEntity).createQueryBuilder('g').where('g.organisation_id = :org', { org: organisationId });
  }

  /** Another organisation's group is not_found, as is one that does not exist. */
  get(organisationId: string, id: string): Promise<GroupEntity> {
    return this.find(this.tx.manager, organisationId, id);
  }

  async create(organisationId: string, input: GroupCreateInput): Promise<GroupEntity> {
    const name = this.cleanName(input.name);
    const permissions = await this.permissions.checkChange([], input.permissions ?? []);
    return this.tx.run(async (m) => {
      await this.assertNameFree(m, organisationId, name);
      const { identifiers } = await this.translate(() => m.getRepository(GroupEntity).insert({ organisationId, name, permissions }));
      return this.find(m, organisationId, String(identifiers[0].id));
    });
  }

  async update(organisationId: string, id: string, input: GroupUpdateInput): Promise<GroupEntity> {
    return this.managers.preserving(organisationId, async (m) => {
      const group = await this.find(m, organisationId, id, true);
      const patch: Partial<Pick<GroupEntity, 'name' | 'permissions'>> = {};
      if (input.name !== undefined) {
        const name = this.cleanName(input.name);
        if (name !== group.name) {
          await this.assertNameFree(m, organisationId, name, group.id);
          patch.name = name;
        }
      }
      if (input.permissions !== undefined) {
        const next = await this.permissions.checkChange(group.permissions, input.permissions);
        if (!sameCodes(next, group.permissions)) patch.permissions = next;
      }
      return this.save(m, group, patch);
    });
  }

  /** 409 group_holds_cases while any case names the group; members stay, without a group. */
  async delete(organisationId: string, id: string): Promise<void> {
    await this.managers.preserving(organisationId, async (m) => {
      const group = await this.find(m, organisationId, id, true);
      const held: unknown[] = await m.query(`SELECT 1 FROM cases WHERE group_id = $1 LIMIT 1`, [group.id]);
      if (held.length > 0) throw groupHoldsCases();
      // The FK would null group_id too; doing it here also records the change on each person.
      await m.query(`UPDATE people SET group_id = NULL, updated_at = now() WHERE group_id = $1`, [group.id]);
      // A case added meanwhile waits on the row lock, then fails its FK; this covers any other writer.
      await m
        .getRepository(GroupEntity)
        .delete({ id: group.id })
        .catch((err: unknown) => {
          throw pgCode(err) === PG_FOREIGN_KEY_VIOLATION ? groupHoldsCases() : err;
        });
    });
  }

  async getPermissions(organisationId: string, id: string): Promise<string[]> {
    return (await this.get(organisationId, id)).permissions;
  }

  async setPermissions(organisationId: string, id: string, codes: string[]): Promise<string[]> {
    return (await this.update(organisationId, id, { permissions: codes })).permissions;
  }

  /** Adding a code the group already holds changes nothing and answers the list. */
  async addPermission(organisationId: string, id: string, code: string): Promise<string[]> {
    return this.managers.preserving(organisationId, async (m) => {
      const group = await this.find(m, organisationId, id, true);
      const next = await this.permissions.checkChange(group.permissions, [...group.permissions, code]);
      return (await this.save(m, group, sameCodes(next, group.permissions) ? {} : { permissions: next })).permissions;
    });
  }

  /** An unknown code is unknown_permission; a known code the group lacks changes nothing. */
  async removePermission(organisationId: string, id: string, code: string): Promise<string[]> {
    return this.managers.preserving(organisationId, async (m) => {
      const group = await this.find(m, organisationId, id, true);
      await this.permissions.known([code]);
      if (!group.permissions.includes(code)) return group.permissions;
      const next = await this.permissions
        .checkChange(
          group.permissions,
          group.permissions.filter((c) => c !== code),
        )
        .catch((err: unknown) => {
          throw err instanceof DomainError && err.code === 'permission_not_grantable' ? codeNotRemovable(code) : err;
        });
      return (await this.save(m, group, { permissions: next })).permissions;
    });
  }

  private cleanName(raw: string): string {
    const name = (raw ?? '').trim();
    if (!name) throw validationFailed('name', 'must not be empty');
    if (name.length > 100) throw validationFailed('name', 'must be at most 100 characters');
    return name;
  }

  private async find(m: EntityManager, organisationId: string, id: string, lock = false): Promise<GroupEntity> {
    const lockMode = lock ? { lock: { mode: 'pessimistic_write' as const } } : {};
    const group = isId(id) ? await m.getRepository(GroupEntity).findOne({ where: { id, organisationId }, ...lockMode }) : null;
    if (!group) throw notFound('group');
    return group;
  }

  private async assertNameFree(m: EntityManager, organisationId: string, name: string, exceptId?: string): Promise<void> {
    const qb = m
      .getRepository(GroupEntity)
      .createQueryBuilder('g')
      .where('g.organisation_id = :org AND lower(g.name) = lower(:name)', { org: organisationId, name });
    if (exceptId) qb.andWhere('g.id <> :id', { id: exceptId });
    if (await qb.getExists()) throw groupNameTaken();
  }

  private async save(m: EntityManager, group: GroupEntity, patch: Partial<Pick<GroupEntity, 'name' | 'permissions'>>): Promise<GroupEntity> {
    if (Object.keys(patch).length === 0) return group;
    await this.translate(() => m.getRepository(GroupEntity).update({ id: group.id }, { ...patch, updatedAt: () => 'now()' }));
    return this.find(m, group.organisationId, group.id);
  }

  /** A name race lost to a concurrent writer (the unique index) answers what the check would have. */
  private async translate<T>(write: () => Promise<T>): Promise<T> {
    return write().catch((err: unknown) => {
      throw pgCode(err) === PG_UNIQUE_VIOLATION ? groupNameTaken() : err;
    });
  }
}
