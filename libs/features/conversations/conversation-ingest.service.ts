import { Injectable } from '@nestjs/common';
import { Outbox } from '@kernel/events';
import { randomBytes } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { Clock, DomainError, isId, notFound, validationFailed } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { ConversationEntity } from './conversation.entity';
import { FactEntity } from './fact.entity';
import { SummaryEntity } from './summary.entity';
import { TurnEntity } from './turn.entity';

/** BCP 47-ish: a 2-3 letter language, then optional subtags (`en`, `pt-BR`, `zh-Hant-TW`). */
export const LANGUAGE_CODE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

export interface TurnInput {
  speaker: string;
  /** One of the conversation's two languages; the translation is into the other. */
  language: string;
  text: string;
  translation: string;
}

function required(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw validationFailed(field, 'must not be blank');
  if (value.length > max) throw validationFailed(field, `must be at most ${max} characters`);
  return value;
}

function language(field: string, value: unknown): string {
  if (typeof value !== 'string' || !LANGUAGE_CODE.test(value)) throw validationFailed(field, 'must be a language code such as en or pt-BR');
  return value;
}

/**
 * The platform's interpreting app side: conversations are made here (and by the admin CLI), never
 * through the REST API. Events go to the outbox in the transaction of the change.
 */
@Injectable()
export class ConversationIngestService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
  ) {}

  /** A new conversation in an open case; a closed case answers case_closed. */
  async start(caseId: string, languageA: string, languageB: string): Promise<ConversationEntity> {
    const [a, b] = [language('language_a', languageA), language('language_b', languageB)];
    if (a.toLowerCase() === b.toLowerCase()) throw validationFailed('language_b', 'must differ from language_a');
    return this.tx.run(async (m) => {
      // SHARE keeps the case from being closed while the conversation is being made in it.
      const [found] = isId(caseId) ? await m.query(`SELECT organisation_id, status FROM cases WHERE id = $1 FOR SHARE`, [caseId]) : [];
      if (!found) throw notFound('case');
      if (found.status === 'closed') throw new DomainError('case_closed', `Case ${caseId} is closed: no conversation can be started in it.`);
      const now = this.clock.now();
      const repo = m.getRepository(ConversationEntity);
      const conversation = repo.create({
        id: randomBytes(16).toString('hex'),
        organisationId: String(found.organisation_id),
        caseId,
        languageA: a,
        languageB: b,
        status: 'active',
        startedAt: now,
        endedAt: null,
        createdAt: now,
      });
      await repo.insert(conversation);
      return conversation;
    });
  }

  /** Appends the next turn (seq = last + 1, under the conversation's row lock); an ended conversation takes none. */
  async appendTurn(conversationId: string, input: TurnInput): Promise<TurnEntity> {
    const speaker = required('speaker', input.speaker, 100);
    const text = required('text', input.text, 20000);
    const translation = required('translation', input.translation, 20000);
    return this.tx.run(async (m) => {
      const conversation = await this.lock(m, conversationId);
      if (conversation.status === 'ended') throw validationFailed('conversation', 'has ended: no turn can be added');
      const pair = [conversation.languageA, conversation.languageB];
      if (!pair.includes(input.language)) throw validationFailed('language', `must be ${pair.join(' or ')}`);
      const [{ seq }] = await m.query(`SELECT COALESCE(max(seq), 0) + 1 AS seq FROM turns WHERE conversation_id = $1`, [conversationId]);
      const repo = m.getRepository(TurnEntity);
      return repo.save(
        repo.create({
          conversationId,
          seq: Number(seq),
          speaker,
          language: input.language,
          text,
          translationLanguage: input.language === pair[0] ? pair[1] : pair[0],
          translation,
          spokenAt: this.clock.now(),
        }),
      );
    });
  }

  /** Records a fact; facts may also be added after the conversation ended (e.g. on review). */
  async recordFact(conversationId: string, label: string, value: string): Promise<FactEntity> {
    const l = required('label', label, 200);
    const v = required('value', value, 2000);
    return this.tx.run(async (m) => {
      await this.lock(m, conversationId);
      const repo = m.getRepository(FactEntity);
      return repo.save(repo.create({ conversationId, label: l, value: v, createdAt: this.clock.now() }));
    });
  }

  /** Ends it; sends conversation.ended when it has at least one turn. Ending an ended conversation changes nothing. */
  async end(conversationId: string): Promise<ConversationEntity> {
    return this.tx.run(async (m) => {
      const conversation = await this.lock(m, conversationId);
      if (conversation.status === 'ended') return conversation;
      conversation.status = 'ended';
      conversation.endedAt = this.clock.now();
      await m.getRepository(ConversationEntity).update({ id: conversationId }, { status: 'ended', endedAt: conversation.endedAt });
      const [turn] = await m.query(`SELECT 1 FROM turns WHERE conversation_id = $1 LIMIT 1`, [conversationId]);
      if (turn) {
        await this.outbox.emit(m, conversation.organisationId, 'conversation.ended', { conversation_id: conversationId }, conversation.endedAt);
      }
      return conversation;
    });
  }

  /** Writes the summary, or rewrites it (revision + 1); sends summary.ready every time. */
  async writeSummary(conversationId: string, text: string): Promise<SummaryEntity> {
    const body = required('text', text, 50000);
    return this.tx.run(async (m) => {
      const conversation = await this.lock(m, conversationId);
      const now = this.clock.now();
      await m.query(
        `INSERT INTO summaries (conversation_id, text, revision, created_at, updated_at) VALUES ($1, $2, 1, $3, $3)
         ON CONFLICT (conversation_id) DO UPDATE SET text = EXCLUDED.text, revision = summaries.revision + 1, updated_at = EXCLUDED.updated_at`,
        [conversationId, body, now.toISOString()],
      );
      await this.outbox.emit(m, conversation.organisationId, 'summary.ready', { conversation_id: conversationId }, now);
      return m.getRepository(SummaryEntity).findOneByOrFail({ conversationId });
    });
  }

  /** The conversation, locked for the rest of the transaction (serialises turns, ending and summaries). */
  private async lock(m: EntityManager, conversationId: string): Promise<ConversationEntity> {
    const found = /^[0-9a-f]{32}$/.test(conversationId)
      ? await m.getRepository(ConversationEntity).findOne({ where: { id: conversationId }, lock: { mode: 'pessimistic_write' } })
      : null;
    if (!found) throw notFound('conversation');
    return found;
  }
}
