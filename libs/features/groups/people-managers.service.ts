import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { DomainError, ORGANISATION_OWN, PEOPLE_MANAGE } from '@kernel/core';
import { TransactionHost } from '@kernel/database';

/** Active members holding each of the guarded abilities. */
interface Holders {
  /** Able to manage people: their group holds people.manage or organisation.own. */
  managers: number;
  /** Owners: their group holds organisation.own (who can also use the Integrations section). */
  owners: number;
}

/**
 * last_people_manager: no change may leave an organisation that had an active person able to
 * manage people with none, nor one that had an active owner (organisation.own) with none, so a
 * key (REST or SCIM) can neither lock the organisation out of managing its people nor out of
 * the Integrations section, whose owners can always sign in. Changes run under a lock on the
 * organisation's row, so two concurrent demotions are serialised and the second one sees the first.
 * The lock is FOR NO KEY UPDATE, which serialises these changes as well as FOR UPDATE would but
 * leaves alone the key-share locks of rows being inserted that reference the organisation (a
 * person or case added meanwhile): with FOR UPDATE, a change here waiting on a group's row could
 * wait on an add that holds that row and waits on the organisation's (a deadlock).
 */
@Injectable()
export class PeopleManagersService {
  constructor(private readonly tx: TransactionHost) {}

  /** Runs `change` in the current transaction under the organisation lock; refuses and rolls back if it removes the last manager or owner. */
  async preserving<T>(organisationId: string, change: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.tx.run(async (m) => {
      await m.query(`SELECT id FROM organisations WHERE id = $1 FOR NO KEY UPDATE`, [organisationId]);
      const before = await this.holders(m, organisationId);
      const result = await change(m);
      const after = await this.holders(m, organisationId);
      if (before.owners > 0 && after.owners === 0) {
        throw new DomainError(
          'last_people_manager',
          `This change would leave the organisation with no active owner (a person whose group holds ${ORGANISATION_OWN}).`,
        );
      }
      if (before.managers > 0 && after.managers === 0) {
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

  /** The same count, and of those the owners, in one read. */
  private async holders(m: EntityManager, organisationId: string): Promise<Holders> {
    const [row] = await m.query(
      `SELECT count(*)::int AS n, (count(*) FILTER (WHERE $3 = ANY(g.permissions)))::int AS owners
         FROM people p JOIN groups g ON g.id = p.group_id
        WHERE p.organisation_id = $1 AND NOT p.disabled AND g.permissions && $2::text[]`,
      [organisationId, [PEOPLE_MANAGE, ORGANISATION_OWN], ORGANISATION_OWN],
    );
    return { managers: row.n as number, owners: row.owners as number };
  }
}
