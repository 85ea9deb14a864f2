import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { DomainError, notFound, EmailAddress, parseEmail } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { GroupEntity, PermissionsService } from '@features/groups';
import { OrganisationEntity } from '@features/organisations';
import { findAccount, joinOrganisation, lockAddress } from './accounts';
import { assignableGroup } from './group-assignment';
import { InvitationEntity, InvitationSource } from './invitation.entity';
import { InvitationsService } from './invitations.service';
import { PeopleMail } from './people-mail';
import { PersonEntity } from './person.entity';

export interface PersonInput {
  email: string;
  name?: string;
  jobTitle?: string | null;
  groupId?: string | null;
}

export type AddOutcome =
  { outcome: 'existing'; person: PersonEntity } | { outcome: 'created'; person: PersonEntity } | { outcome: 'invited'; invitation: InvitationEntity };

/**
 * Adding a person by address (REST `POST /v1/users`, SCIM, the console):
 * - already a member of this organisation → `existing`, unchanged;
 * - an account in another organisation → 409 in_another_organisation;
 * - no account, or an account in no organisation, on one of the organisation's verified
 *   domains → the account is made (or attached) as a member → `created`, with a welcome email;
 * - otherwise → a pending invitation with an emailed accept link → `invited` (a pending,
 *   unexpired invitation for the address is answered as is; an expired one is replaced).
 * Races on one address are settled by the unique indexes: the loser re-reads and decides again.
 */
@Injectable()
export class PeopleAdder {
  constructor(
    private readonly tx: TransactionHost,
    private readonly permissions: PermissionsService,
    private readonly mail: PeopleMail,
    private readonly invitations: InvitationsService,
  ) {}

  async add(organisationId: string, input: PersonInput, source: InvitationSource, connectionId: string | null): Promise<AddOutcome> {
    const email = parseEmail(input.email);
    return this.tx.run(async (m) => {
      await lockAddress(m, organisationId, email.address);
      return this.decideLocked(m, organisationId, email, input, source, connectionId);
    });
  }

  /**
   * `add` inside the caller's transaction `m`, which already holds `lockAddress` for this
   * address (SCIM's create takes it before its own checks): the same rule, one round trip fewer.
   */
  async addLocked(m: EntityManager, organisationId: string, input: PersonInput, source: InvitationSource, connectionId: string | null): Promise<AddOutcome> {
    return this.decideLocked(m, organisationId, parseEmail(input.email), input, source, connectionId);
  }

  private async decideLocked(
    m: EntityManager,
    organisationId: string,
    email: EmailAddress,
    input: PersonInput,
    source: InvitationSource,
    connectionId: string | null,
  ): Promise<AddOutcome> {
    // The organisation and whether the address's domain is one of its verified ones, in one statement.
    const { entities, raw } = await m
      .getRepository(OrganisationEntity)
      .createQueryBuilder('o')
      .addSelect('EXISTS (SELECT 1 FROM organisation_domains d WHERE d.organisation_id = o.id AND d.domain = :domain)', 'verified')
      .where('o.id = :id', { id: organisationId, domain: email.domain })
      .getRawAndEntities<{ verified: boolean }>();
    const org = entities[0];
    if (!org) throw notFound('organisation');
    const verified = raw[0].verified === true;
    const group = input.groupId ? await assignableGroup(m, this.permissions, organisationId, input.groupId) : null;
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await this.decide(m, org, email, verified, input, group, source, connectionId);
      if (outcome) return outcome;
    }
    throw new Error(`people: adding ${email.address} kept losing races; giving up`);
  }

  /** One pass of the rule; null when a concurrent add got there first (decide again). */
  private async decide(
    m: EntityManager,
    org: OrganisationEntity,
    email: EmailAddress,
    onVerifiedDomain: boolean,
    input: PersonInput,
    group: GroupEntity | null,
    source: InvitationSource,
    connectionId: string | null,
  ): Promise<AddOutcome | null> {
    const account = await findAccount(m, email.address);
    if (account?.organisationId === org.id) return { outcome: 'existing', person: account };
    if (account?.organisationId) {
      throw new DomainError('in_another_organisation', `${email.address} is a member of another organisation; a person can be in one organisation only.`);
    }
    if (onVerifiedDomain) {
      const fields = { name: input.name, jobTitle: input.jobTitle, groupId: group?.id ?? null };
      const person = await joinOrganisation(m, account, email.address, org.id, fields);
      if (!person) return null;
      // An invitation sent before the domain was verified is moot now; it leaves the list.
      await this.invitations.withdrawPendingFor(m, org.id, person.email);
      await this.mail.welcome(person.email, org.name);
      return { outcome: 'created', person };
    }
    const invitation = await this.invite(m, org, email.address, input, group, source, connectionId);
    return invitation && { outcome: 'invited', invitation };
  }

  private async invite(
    m: EntityManager,
    org: OrganisationEntity,
    address: string,
    input: PersonInput,
    group: GroupEntity | null,
    source: InvitationSource,
    connectionId: string | null,
  ): Promise<InvitationEntity | null> {
    const opened = await this.invitations.open(m, {
      organisationId: org.id,
      address,
      name: input.name ?? null,
      jobTitle: input.jobTitle ?? null,
      groupId: group?.id ?? null,
      source,
      connectionId,
    });
    if (opened?.token) await this.mail.invitation(opened.invitation.email, org.name, opened.token, opened.invitation.expiresAt);
    return opened?.invitation ?? null;
  }
}
