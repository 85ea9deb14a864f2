import { Injectable } from '@nestjs/common';
import { DomainError, notFound, Page, PageRequest } from '@kernel/core';
import { CursorCodec, paginate, TransactionHost } from '@kernel/database';
import { OrganisationEntity } from '@features/organisations';
import { ConversationEntity } from './conversation.entity';
import { FactEntity } from './fact.entity';
import { SummaryEntity } from './summary.entity';
import { TurnEntity } from './turn.entity';

export const CONVERSATION_ID = /^[0-9a-f]{32}$/;

/** What a summary call answers with 404 when the organisation has conversation review off. */
export const REVIEW_OFF_MESSAGE = 'Conversation review is off for this organisation, so no summaries are available; the organisation can switch it on.';
export const NO_SUMMARY_MESSAGE = 'This conversation has no summary yet; summary.ready is sent when one is written.';

/** The read side of conversations (the platform's interpreting app writes them). */
@Injectable()
export class ConversationsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly cursors: CursorCodec,
  ) {}

  /** Newest first, by cursor. */
  list(organisationId: string, page: PageRequest): Promise<Page<ConversationEntity>> {
    const qb = this.tx.manager.getRepository(ConversationEntity).createQueryBuilder('v').where('v.organisation_id = :org', { org: organisationId });
    return paginate(qb, page, this.cursors, { idType: 'bpchar' });
  }

  /** Another organisation's conversation (or none) answers not_found. */
  async get(organisationId: string, conversationId: string): Promise<ConversationEntity> {
    const found = CONVERSATION_ID.test(conversationId)
      ? await this.tx.manager.getRepository(ConversationEntity).findOneBy({ id: conversationId, organisationId })
      : null;
    if (!found) throw notFound('conversation');
    return found;
  }

  /** In the order they were recorded. */
  async facts(organisationId: string, conversationId: string): Promise<FactEntity[]> {
    await this.get(organisationId, conversationId);
    return this.tx.manager.getRepository(FactEntity).find({ where: { conversationId }, order: { id: 'ASC' } });
  }

  /** Turn by turn, each in the speaker's language and translated into the other. */
  async transcript(organisationId: string, conversationId: string): Promise<TurnEntity[]> {
    await this.get(organisationId, conversationId);
    return this.tx.manager.getRepository(TurnEntity).find({ where: { conversationId }, order: { seq: 'ASC' } });
  }

  /**
   * Only where the organisation has conversation review on: otherwise not_found saying so.
   * On, but nothing written yet: not_found saying there is no summary yet.
   */
  async summary(organisationId: string, conversationId: string): Promise<SummaryEntity> {
    await this.get(organisationId, conversationId);
    const org = await this.tx.manager.getRepository(OrganisationEntity).findOneBy({ id: organisationId });
    if (!org?.conversationReview) throw new DomainError('not_found', REVIEW_OFF_MESSAGE);
    const summary = await this.tx.manager.getRepository(SummaryEntity).findOneBy({ conversationId });
    if (!summary) throw new DomainError('not_found', NO_SUMMARY_MESSAGE);
    return summary;
  }
}
