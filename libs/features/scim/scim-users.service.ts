import { Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { EntityManager } from 'typeorm';
import { DomainError, notFound } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { PG_UNIQUE_VIOLATION, pgCode } from '@features/groups';
import { InvitationsService, lockAddress, PeopleAdder, PeopleService, PersonChange } from '@features/people';
import { ScimCaller, ScimList, ScimPage } from './model/scim-caller';
import { invalidValue, mutability, uniqueness } from './model/scim-error';
import { parseUserFilter } from './model/scim-filter';
import { applyScimPatch, ScimJson, readScimResource } from './model/scim-patch';
import { USER_RESOURCE } from './model/scim-schemas';
import {
  activeOf,
  isMember,
  platformName,
  platformNameOf,
  presentUser,
  ScimUserRow,
  titleOf,
  UserFields,
  userFields,
  userState,
} from './model/scim-user-model';
import { ScimUsersRepository } from './scim-users.repository';
import { attributeChanges } from './model/provisioning-event';
import { ProvisioningLogService, WriteRecorder } from './provisioning-log.service';
import { ScimWalks } from './scim-walks';

/**
 * SCIM Users: another door to the organisation's people and invitations, under the same rules.
 * POST adds by address exactly as `POST /v1/users` does (created on a verified domain, invited
 * otherwise; source `scim`); `active` is the person's `disabled` (PeopleService, so
 * last_people_manager applies) or, for an invited address, whether its invitation stands;
 * DELETE removes the person (PeopleService) or withdraws the invitation. Every write runs in one
 * transaction with the user's scim_users row locked.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly repo: ScimUsersRepository,
    private readonly walks: ScimWalks,
    private readonly adder: PeopleAdder,
    private readonly people: PeopleService,
    private readonly invitations: InvitationsService,
    private readonly config: AppConfig,
    private readonly log: ProvisioningLogService,
  ) {}

  async list(caller: ScimCaller, filter: string | undefined, page: ScimPage): Promise<ScimList<ScimJson>> {
    const query = { conditions: filter === undefined ? [] : parseUserFilter(filter) };
    const m = this.tx.manager;
    const org = caller.organisationId;
    const walk = { organisationId: org, connectionId: caller.connectionId, resource: 'Users' as const, signature: `${JSON.stringify(query.conditions)} by id` };
    const { totalResults, rows } = await this.walks.page(walk, page, {
      find: (slice) => this.repo.find(m, org, query, slice),
      count: () => this.repo.count(m, org, query),
      keyOf: (r) => String(r.id),
    });
    return { totalResults, startIndex: page.startIndex, items: rows.map((r) => this.present(caller, r)) };
  }

  async get(caller: ScimCaller, id: string): Promise<ScimJson> {
    return this.present(caller, await this.load(this.tx.manager, caller.organisationId, id));
  }

  /** 409 uniqueness when the address is already a user here (member or invited) or in another organisation. */
  async create(caller: ScimCaller, body: unknown): Promise<ScimJson> {
    const next = userFields(readScimResource(body, USER_RESOURCE));
    const org = caller.organisationId;
    return this.log.written((record) =>
      this.tx.run(async (m) => {
        // Until commit, no other add of this address (SCIM or REST) runs between the check and the write.
        await lockAddress(m, org, next.userName);
        // Whether the address or the externalId is a live user's; if neither, a row left from a person
        // removed through REST is dropped (a POST makes a new user, with a new id) and a removed
        // user's externalId is freed.
        const taken = await this.repo.checkCreate(m, org, next.userName, next.externalId);
        if (taken.addressTaken) throw uniqueness(`userName: ${next.userName} is already a User of this organisation.`);
        if (taken.externalIdTaken) throw uniqueness(`externalId: "${next.externalId}" is already used by another User of this organisation.`);
        await this.assertManager(m, org, next.managerId, null);
        const outcome = await this.adder
          .addLocked(m, org, { email: next.userName, name: platformName(next) ?? undefined, jobTitle: next.title }, 'scim', caller.connectionId)
          .catch((err: unknown) => {
            throw err instanceof DomainError && err.code === 'in_another_organisation' ? uniqueness(`userName: ${err.message}`) : err;
          });
        if (outcome.outcome === 'existing') throw uniqueness(`userName: ${next.userName} is already a User of this organisation.`);
        const saved = await this.repo.saveAttributesOf(m, org, next.userName, next, platformName(next)).catch((err: unknown) => {
          throw pgCode(err) === PG_UNIQUE_VIOLATION
            ? uniqueness(`externalId: "${next.externalId}" is already used by another User of this organisation.`)
            : err;
        });
        if (!saved) throw new Error('scim: the person or invitation has no scim_users row; is the Scim migration applied?');
        const id = saved.id;
        let after = saved.row;
        if (next.active === false) {
          await this.setActive(m, caller, await this.load(m, org, id, true), next);
          after = await this.load(m, org, id);
        } else if (!after) throw notFound('user');
        await record(m, caller, { operation: 'create', resourceType: 'User', resourceId: id, status: 201, changes: attributeChanges(null, userState(after)) });
        return this.present(caller, after);
      }),
    );
  }

  /** PUT: the attributes given replace the user's; those left out are cleared (but `active`, kept). */
  async replace(caller: ScimCaller, id: string, body: unknown): Promise<ScimJson> {
    const next = userFields(readScimResource(body, USER_RESOURCE));
    return this.log.written((record) =>
      this.tx.run(async (m) => {
        const row = await this.load(m, caller.organisationId, id, true);
        await this.save(m, caller, row, next);
        return this.recorded(m, caller, record, 'replace', row);
      }),
    );
  }

  /**
   * PATCH: every operation applies or none does. A user is always answered with `active`, so a
   * PATCH that removes it (`remove`, or null) leaves the user not active: deactivated, as false does.
   */
  async patch(caller: ScimCaller, id: string, body: unknown): Promise<ScimJson> {
    return this.log.written((record) =>
      this.tx.run(async (m) => {
        const row = await this.load(m, caller.organisationId, id, true);
        const next = userFields({ active: false, ...applyScimPatch(userState(row), body, USER_RESOURCE) });
        await this.save(m, caller, row, next);
        return this.recorded(m, caller, record, 'update', row);
      }),
    );
  }

  /** The user after a write, recorded with what changed, and answered. */
  private async recorded(m: EntityManager, caller: ScimCaller, record: WriteRecorder, operation: 'replace' | 'update', before: ScimUserRow): Promise<ScimJson> {
    const after = await this.load(m, caller.organisationId, before.id);
    await record(m, caller, {
      operation,
      resourceType: 'User',
      resourceId: String(before.id),
      status: 200,
      changes: attributeChanges(userState(before), userState(after)),
    });
    return this.present(caller, after);
  }

  /** Removes the member from the organisation (the account remains) or withdraws the invitation; the SCIM id is forgotten. */
  async remove(caller: ScimCaller, id: string): Promise<void> {
    const organisationId = caller.organisationId;
    await this.log.written((record) =>
      this.tx.run(async (m) => {
        const row = await this.load(m, organisationId, id, true);
        if (isMember(row)) await this.people.remove(organisationId, row.person_id as string);
        else if (row.inv_status === 'pending') await this.invitations.withdraw(organisationId, row.inv_id as string);
        await this.repo.delete(m, row.id);
        await record(m, caller, {
          operation: 'delete',
          resourceType: 'User',
          resourceId: String(row.id),
          status: 204,
          changes: attributeChanges(userState(row), null),
        });
      }),
    );
  }

  private async save(m: EntityManager, caller: ScimCaller, row: ScimUserRow, next: UserFields): Promise<void> {
    const org = caller.organisationId;
    if (next.userName.toLowerCase() !== row.email_key) {
      throw mutability('userName: the sign-in address of a User cannot be changed; remove the User and create one with the new address.');
    }
    if (next.externalId !== null && next.externalId !== row.external_id) await this.assertExternalIdFree(m, org, next.externalId, row.id);
    if (next.managerId !== row.manager_id) await this.assertManager(m, org, next.managerId, row.id);
    const name = platformName(next);
    const renamed = name !== null && name !== platformNameOf(row);
    // Without any name from SCIM the platform keeps the one it has (it shows a name for everyone).
    await this.saveAttributes(m, row.id, next, renamed ? name : platformNameOf(row));
    const retitled = next.title !== titleOf(row);
    if (isMember(row)) {
      const change: PersonChange = {};
      if (renamed) change.name = name;
      if (retitled) change.jobTitle = next.title;
      if (next.active !== undefined && next.active !== activeOf(row)) change.disabled = !next.active;
      if (Object.keys(change).length > 0) await this.people.update(org, row.person_id as string, change);
      return;
    }
    if (renamed || retitled) {
      await this.invitations.describe(m, row.inv_id as string, { name: renamed ? name : row.inv_name, jobTitle: next.title });
    }
    if (next.active !== undefined && next.active !== activeOf(row)) await this.setActive(m, caller, row, next);
  }

  /**
   * `active` of an invited address: false withdraws the invitation and keeps the user listed
   * (inactive); true invites the address again (a new email), by the adding rule.
   */
  private async setActive(m: EntityManager, caller: ScimCaller, row: ScimUserRow, next: UserFields): Promise<void> {
    const org = caller.organisationId;
    if (isMember(row)) {
      await this.people.update(org, row.person_id as string, { disabled: next.active === false });
      return;
    }
    if (next.active === false) {
      if (row.inv_status === 'pending') await this.invitations.withdraw(org, row.inv_id as string);
      await this.repo.setDeactivated(m, row.id, true);
      return;
    }
    const name = platformName(next) ?? row.inv_name ?? undefined;
    await this.adder.add(org, { email: next.userName, name, jobTitle: next.title, groupId: row.inv_group_id }, 'scim', caller.connectionId);
    await this.repo.setDeactivated(m, row.id, false);
  }

  /** The externalId check can lose a race to a concurrent writer; the unique index then answers the same 409. */
  private async saveAttributes(m: EntityManager, id: string, next: UserFields, platformName: string | null): Promise<void> {
    await this.repo.saveAttributes(m, id, next, platformName).catch((err: unknown) => {
      throw pgCode(err) === PG_UNIQUE_VIOLATION ? uniqueness(`externalId: "${next.externalId}" is already used by another User of this organisation.`) : err;
    });
  }

  private async assertExternalIdFree(m: EntityManager, org: string, externalId: string, exceptId: string | null): Promise<void> {
    if (!(await this.repo.externalIdFree(m, org, externalId, exceptId)))
      throw uniqueness(`externalId: "${externalId}" is already used by another User of this organisation.`);
  }

  private async assertManager(m: EntityManager, org: string, managerId: string | null, selfId: string | null): Promise<void> {
    if (managerId === null) return;
    if (managerId === selfId) throw invalidValue('manager.value: a User cannot be their own manager.');
    if (!(await this.repo.get(m, org, managerId))) throw invalidValue(`manager.value: there is no User ${managerId} in this organisation.`);
  }

  private async load(m: EntityManager, organisationId: string, id: string, lock = false): Promise<ScimUserRow> {
    const row = await this.repo.get(m, organisationId, id, lock);
    if (!row) throw notFound('user');
    return row;
  }

  private present(caller: ScimCaller, row: ScimUserRow): ScimJson {
    return presentUser(row, this.config.publicBaseUrl, caller.scopes.includes('groups:read'));
  }
}
