import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { DomainError, ORGANISATION_OWN, PEOPLE_MANAGE } from '@kernel/core';
import { TransactionHost } from '@kernel/database';

/**
 * last_people_manager: no change may leave an organisation that had an active person able to
 * manage people with none. Changes run under a lock on the organisation's row, so two
 * concurrent demotions are serialised and the second one sees the first.
 */
@Injectable()
export class PeopleManagersService {
  constructor(private readonly tx: TransactionHost) {}

  /** Runs `change` in the current transaction under the organisation lock; refuses and rolls back if it removes the last manager. */
  async preserving<T>(organisationId: string, change: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.tx.run(async (m) => {
      await m.query(`SELECT id FROM organisations WHERE id = $1 FOR UPDATE`, [organisationId]);
      const before = await this.count(m, organisationId);
      const result = await change(m);
      if (before > 0 && (await this.count(m, organisationId)) === 0) {
        throw new DomainError('last_people_manager', 'This change would leave the organisation with no active person able to manage people.');
      }
      return result;
    });
  }

  /** Active members whose group can manage people (or owns the organisation). */
  async count(m: EntityManager, organisationId: string): Promise<number> {
    const [row] = await m.query(
      `SELECT count(*)::int AS n FROM people p JOIN groups g ON g.id = p.group_id
        WHERE p.organisation_id = $1 AND NOT p.disabled AND g.permissions && $2::text[]`,
      [organisationId, [PEOPLE_MANAGE, ORGANISATION_OWN]],
    );
    return row.n as number;
  }
}
