import { Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Outbox } from '@kernel/events';
import { EntityManager } from 'typeorm';
import { Clock, DomainError, isId, notFound, Page, PageRequest, validationFailed } from '@kernel/core';
import { CursorCodec, paginate, TransactionHost } from '@kernel/database';
import { OrganisationEntity } from '@features/organisations';
import { findAccount, joinOrganisation } from './accounts';
import { InvitationClosedError } from './model/invitation.errors';
import { InvitationEntity, InvitationSource } from './invitation.entity';
import { hashInvitationToken, INVITATION_TOKEN_FORMAT, newInvitationToken } from './model/invitation-token';
import { PersonEntity } from './person.entity';

/** An invitation by its emailed token (the accept page) or by id (the operator's CLI). */
export type InvitationRef = { token: string } | { id: string };

/** What an invitation says: who is invited, as what, by whom. */
export interface InvitationInput {
  organisationId: string;
  address: string;
  name: string | null;
  jobTitle: string | null;
  groupId: string | null;
  source: InvitationSource;
  connectionId: string | null;
}

export interface Acceptance {
  invitation: InvitationEntity;
  person: PersonEntity;
  organisation: OrganisationEntity;
  /** False when the address had become a member by other means before accepting. */
  joined: boolean;
}

/**
 * The one writer of invitations. Open one (the adding rule, REST or SCIM), change what it says
 * (SCIM), list, withdraw, look at, accept. Accepting makes the address's
 * account (made if there is none) a member with the invitation's group, name and job title;
 * for invitations made through the API or SCIM it emits user.joined in the same transaction.
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly cursors: CursorCodec,
    private readonly config: AppConfig,
  ) {}

  /**
   * The address's pending invitation if it is still open (`token` null: no new email), else a new
   * one (an expired one is withdrawn first) with the token to email; null when a concurrent add
   * got there first (decide again). Runs in the caller's transaction, which holds the address lock.
   */
  async open(m: EntityManager, input: InvitationInput): Promise<{ invitation: InvitationEntity; token: string | null } | null> {
    const repo = m.getRepository(InvitationEntity);
    const pending = await repo
      .createQueryBuilder('i')
      .where(`i.organisation_id = :org AND lower(i.email) = lower(:address) AND i.status = 'pending'`, { org: input.organisationId, address: input.address })
      .getOne();
    if (pending && pending.expiresAt > this.clock.now()) return { invitation: pending, token: null };
    if (pending) await repo.update({ id: pending.id, status: 'pending' }, { status: 'withdrawn', answeredAt: () => 'now()' });
    const { token, hash } = newInvitationToken();
    const inserted: Array<{ id: string }> = await m.query(
      `INSERT INTO invitations (organisation_id, email, name, job_title, group_id, token_hash, source, connection_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(days => $9))
       ON CONFLICT (organisation_id, lower(email)) WHERE status = 'pending' DO NOTHING
       RETURNING id`,
      [input.organisationId, input.address, input.name, input.jobTitle, input.groupId, hash, input.source, input.connectionId, this.config.invitationTtlDays],
    );
    if (inserted.length === 0) return null;
    return { invitation: (await repo.findOneBy({ id: String(inserted[0].id) })) as InvitationEntity, token };
  }

  /** What a pending invitation says the person will be called and do (SCIM's PUT and PATCH). */
  async describe(m: EntityManager, id: string, details: { name: string | null; jobTitle: string | null }): Promise<void> {
    await m.query(`UPDATE invitations SET name = $2, job_title = $3 WHERE id = $1`, [id, details.name, details.jobTitle]);
  }

  /** The address joined by other means (a verified domain): its pending invitation is moot and leaves the list. */
  async withdrawPendingFor(m: EntityManager, organisationId: string, address: string): Promise<void> {
    await m.query(
      `UPDATE invitations SET status = 'withdrawn', answered_at = now()
        WHERE organisation_id = $1 AND lower(email) = lower($2) AND status = 'pending'`,
      [organisationId, address],
    );
  }

  /** Pending invitations (expired ones included, until withdrawn or replaced), newest first. */
  list(organisationId: string, page: PageRequest): Promise<Page<InvitationEntity>> {
    const qb = this.tx.manager
      .getRepository(InvitationEntity)
      .createQueryBuilder('i')
      .where(`i.organisation_id = :organisationId AND i.status = 'pending'`, { organisationId });
    // Passing expires_at is a change: a walk by updated_since takes it at the walk's horizon.
    const changedAt = `GREATEST(i.updated_at, CASE WHEN i.expires_at <= CAST(:syncBefore AS timestamptz) THEN i.expires_at END)`;
    return paginate(qb, page, this.cursors, { changedAt });
  }

  async withdraw(organisationId: string, id: string): Promise<void> {
    const result = isId(id)
      ? await this.tx.run((m) =>
          m.getRepository(InvitationEntity).update({ id, organisationId, status: 'pending' }, { status: 'withdrawn', answeredAt: () => 'now()' }),
        )
      : { affected: 0 };
    if (!result.affected) throw notFound('invitation');
  }

  /** The open invitation and its organisation, changing nothing (the page before the form is sent). */
  async preview(ref: InvitationRef): Promise<{ invitation: InvitationEntity; organisation: OrganisationEntity }> {
    const invitation = this.assertOpen(await this.find(this.tx.manager, ref, false));
    const organisation = await this.tx.manager.getRepository(OrganisationEntity).findOneByOrFail({ id: invitation.organisationId });
    return { invitation, organisation };
  }

  /**
   * Accepts an open invitation. `name`, when given, is the name the person typed on the page;
   * otherwise the invitation's (or the account's) is kept. An account that joined another
   * organisation meanwhile answers in_another_organisation and nothing changes.
   */
  async accept(ref: InvitationRef, options: { name?: string } = {}): Promise<Acceptance> {
    if ((options.name?.trim().length ?? 0) > 200) throw validationFailed('name', 'must be at most 200 characters');
    return this.tx.run(async (m) => {
      const invitation = this.assertOpen(await this.find(m, ref, true));
      const organisation = await m.getRepository(OrganisationEntity).findOneByOrFail({ id: invitation.organisationId });
      const { person, joined } = await this.join(m, invitation, options.name?.trim() || invitation.name || undefined);
      if (joined && (invitation.source === 'api' || invitation.source === 'scim')) {
        await this.outbox.emit(m, invitation.organisationId, 'user.joined', { user_id: person.id });
      }
      await m.getRepository(InvitationEntity).update({ id: invitation.id }, { status: 'accepted', answeredAt: () => 'now()' });
      return { invitation: { ...invitation, status: 'accepted' as const }, person, organisation, joined };
    });
  }

  private async join(m: EntityManager, invitation: InvitationEntity, name: string | undefined): Promise<{ person: PersonEntity; joined: boolean }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const account = await findAccount(m, invitation.email, true);
      if (account?.organisationId === invitation.organisationId) return { person: account, joined: false };
      if (account?.organisationId) {
        throw new DomainError(
          'in_another_organisation',
          `${invitation.email} has joined another organisation since this invitation was sent; a person can be in one organisation only.`,
        );
      }
      const fields = { name, jobTitle: invitation.jobTitle ?? undefined, groupId: invitation.groupId };
      const person = await joinOrganisation(m, account, invitation.email, invitation.organisationId, fields);
      if (person) return { person, joined: true };
    }
    throw new Error(`invitations: accepting ${invitation.id} kept losing races; giving up`);
  }

  private async find(m: EntityManager, ref: InvitationRef, lock: boolean): Promise<InvitationEntity | null> {
    const qb = m.getRepository(InvitationEntity).createQueryBuilder('i');
    if ('token' in ref) {
      if (!INVITATION_TOKEN_FORMAT.test(ref.token)) return null;
      qb.where('i.token_hash = :hash', { hash: hashInvitationToken(ref.token) });
    } else {
      if (!isId(ref.id)) return null;
      qb.where('i.id = :id', { id: ref.id });
    }
    return (lock ? qb.setLock('pessimistic_write') : qb).getOne();
  }

  private assertOpen(invitation: InvitationEntity | null): InvitationEntity {
    if (!invitation) throw new InvitationClosedError('unknown');
    if (invitation.status === 'withdrawn') throw new InvitationClosedError('withdrawn');
    if (invitation.status === 'accepted') throw new InvitationClosedError('accepted');
    if (invitation.expiresAt <= this.clock.now()) throw new InvitationClosedError('expired');
    return invitation;
  }
}
