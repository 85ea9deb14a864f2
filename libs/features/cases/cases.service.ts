import { Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { DomainError, isId, notFound, Page, PageRequest, validationFailed } from '@kernel/core';
import { CursorCodec, paginate, TransactionHost } from '@kernel/database';
import { CaseEntity } from './case.entity';

export interface OpenCaseInput {
  /** The calling system's own reference: 1 to 200 characters, not blank, kept exactly as sent. */
  externalRef: string;
  title?: string | null;
  groupId?: string | null;
}

/** Where a signed-in member starts a conversation in a case. */
export interface CaseUrl {
  case_id: string;
  url: string;
}

export const EXTERNAL_REF_MAX = 200;
export const CASE_TITLE_MAX = 200;

/** Cases of an organisation: opened by a calling system under its own reference, closed by the platform. */
@Injectable()
export class CasesService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly config: AppConfig,
    private readonly cursors: CursorCodec,
  ) {}

  /** Newest first, by cursor. */
  list(organisationId: string, page: PageRequest): Promise<Page<CaseEntity>> {
    const qb = this.tx.manager.getRepository(CaseEntity).createQueryBuilder('c').where('c.organisation_id = :org', { org: organisationId });
    return paginate(qb, page, this.cursors);
  }

  /** Another organisation's case (or none) answers not_found. */
  async get(organisationId: string, caseId: string): Promise<CaseEntity> {
    const found = isId(caseId) ? await this.tx.manager.getRepository(CaseEntity).findOneBy({ id: caseId, organisationId }) : null;
    if (!found) throw notFound('case');
    return found;
  }

  /**
   * Opens a case, or answers the one already open under the same reference (`created` false;
   * its title and group are left as they are). The unique index decides between concurrent
   * openers: every one but the first does nothing on conflict and reads the winner's row.
   */
  async open(organisationId: string, input: OpenCaseInput): Promise<{ case: CaseEntity; created: boolean }> {
    const ref = input.externalRef;
    if (typeof ref !== 'string' || ref.trim() === '') throw validationFailed('external_ref', 'must not be blank');
    if (ref.length > EXTERNAL_REF_MAX) throw validationFailed('external_ref', `must be at most ${EXTERNAL_REF_MAX} characters`);
    const title = input.title?.trim() || null;
    if (title && title.length > CASE_TITLE_MAX) throw validationFailed('title', `must be at most ${CASE_TITLE_MAX} characters`);
    return this.tx.run(async (m) => {
      if (input.groupId) {
        // KEY SHARE keeps the group from being deleted before this case references it.
        const group = isId(input.groupId)
          ? await m.query(`SELECT id FROM groups WHERE id = $1 AND organisation_id = $2 FOR KEY SHARE`, [input.groupId, organisationId])
          : [];
        if (group.length === 0) throw validationFailed('group_id', 'no such group in this organisation');
      }
      const inserted: unknown[] = await m.query(
        `INSERT INTO cases (organisation_id, external_ref, title, group_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (organisation_id, external_ref) DO NOTHING RETURNING id`,
        [organisationId, ref, title, input.groupId ?? null],
      );
      const found = await m.getRepository(CaseEntity).findOneByOrFail({ organisationId, externalRef: ref });
      return { case: found, created: inserted.length > 0 };
    });
  }

  /** Closes a case (the platform's side; not a REST call). Closing a closed case changes nothing. */
  async close(caseId: string): Promise<CaseEntity> {
    if (!isId(caseId)) throw notFound('case');
    return this.tx.run(async (m) => {
      await m.query(`UPDATE cases SET status = 'closed', closed_at = now(), updated_at = now() WHERE id = $1 AND status = 'open'`, [caseId]);
      const found = await m.getRepository(CaseEntity).findOneBy({ id: caseId });
      if (!found) throw notFound('case');
      return found;
    });
  }

  /** The member-app address that starts a conversation in the case; a closed case answers case_closed. */
  async conversationUrl(organisationId: string, caseId: string): Promise<CaseUrl> {
    const found = await this.get(organisationId, caseId);
    if (found.status === 'closed') {
      throw new DomainError('case_closed', `Case ${found.id} is closed: no conversation can be started in it.`);
    }
    return { case_id: found.id, url: `${this.config.memberAppBaseUrl}/cases/${found.id}/conversations/new` };
  }
}
