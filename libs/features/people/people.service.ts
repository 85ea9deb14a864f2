import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { isId, notFound, Page, PageRequest } from '@kernel/core';
import { CursorCodec, paginate, TransactionHost } from '@kernel/database';
import { PeopleManagersService, PermissionsService } from '@features/groups';
import { assignableGroup } from './group-assignment';
import { PersonEntity } from './person.entity';

/** The editable attributes of a member; undefined leaves a field as it is. */
export interface PersonChange {
  name?: string;
  jobTitle?: string | null;
  groupId?: string | null;
  disabled?: boolean;
}

/**
 * The members of an organisation: list, read, edit, remove. Changes that can take away the
 * ability to manage people or ownership (group, disabled, removal) run under
 * PeopleManagersService, which serialises them per organisation and refuses the one that would
 * leave no manager or no owner.
 */
@Injectable()
export class PeopleService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly permissions: PermissionsService,
    private readonly managers: PeopleManagersService,
    private readonly cursors: CursorCodec,
  ) {}

  /** Members, newest first by joined_at (a removed person is no longer listed). */
  list(organisationId: string, page: PageRequest): Promise<Page<PersonEntity>> {
    const qb = this.tx.manager.getRepository(PersonEntity).createQueryBuilder('p').where('p.organisation_id = :organisationId', { organisationId });
    // Members always have joined_at; created_at stands in for a row seeded without one.
    return paginate(qb, page, this.cursors, { orderColumn: 'joined_at', position: (p) => ({ createdAt: p.joinedAt ?? p.createdAt, id: p.id }) });
  }

  /** A member of the organisation; anyone else (another organisation's, a removed account) is not_found. */
  async get(organisationId: string, id: string, m: EntityManager = this.tx.manager, lock = false): Promise<PersonEntity> {
    const qb = m.getRepository(PersonEntity).createQueryBuilder('p').where('p.id = :id AND p.organisation_id = :organisationId', { id, organisationId });
    const person = isId(id) ? await (lock ? qb.setLock('pessimistic_write') : qb).getOne() : null;
    if (!person) throw notFound('person');
    return person;
  }

  async update(organisationId: string, id: string, change: PersonChange): Promise<PersonEntity> {
    const guarded = change.groupId !== undefined || change.disabled !== undefined;
    const apply = async (m: EntityManager) => {
      const person = await this.get(organisationId, id, m, true);
      const patch: Record<string, unknown> = {};
      if (change.name !== undefined) patch.name = change.name;
      if (change.jobTitle !== undefined) patch.jobTitle = change.jobTitle;
      if (change.disabled !== undefined) patch.disabled = change.disabled;
      if (change.groupId !== undefined && change.groupId !== person.groupId) {
        patch.groupId = change.groupId === null ? null : (await assignableGroup(m, this.permissions, organisationId, change.groupId)).id;
      }
      if (Object.keys(patch).length === 0) return person;
      await m.getRepository(PersonEntity).update({ id: person.id }, { ...patch, updatedAt: () => 'now()' });
      return m.getRepository(PersonEntity).findOneByOrFail({ id: person.id });
    };
    return guarded ? this.managers.preserving(organisationId, apply) : this.tx.run(apply);
  }

  /** Takes the person out of the organisation; the account (address, name) remains. */
  async remove(organisationId: string, id: string): Promise<void> {
    await this.managers.preserving(organisationId, async (m) => {
      const person = await this.get(organisationId, id, m, true);
      await m
        .getRepository(PersonEntity)
        .update({ id: person.id }, { organisationId: null, groupId: null, disabled: false, joinedAt: null, updatedAt: () => 'now()' });
    });
  }
}
