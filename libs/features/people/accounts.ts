import { EntityManager } from 'typeorm';
import { PersonEntity } from './person.entity';

/** What a person brings into the organisation they join; undefined keeps the account's value. */
export interface MembershipFields {
  name?: string | null;
  jobTitle?: string | null;
  groupId: string | null;
}

/** The account of an address (one platform-wide, matched case-insensitively), optionally row-locked. */
export function findAccount(m: EntityManager, address: string, lock = false): Promise<PersonEntity | null> {
  const qb = m.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:address)', { address });
  return (lock ? qb.setLock('pessimistic_write') : qb).getOne();
}

/**
 * Makes `account` (or, when null, a new account for `address`) a member of the organisation.
 * Both writes are conditional — the insert on the address's unique index, the update on the
 * account still being in no organisation — so a concurrent add or accept of the same address
 * cannot make two accounts or move one twice: the loser gets null and decides again.
 */
export async function joinOrganisation(
  m: EntityManager,
  account: PersonEntity | null,
  address: string,
  organisationId: string,
  fields: MembershipFields,
): Promise<PersonEntity | null> {
  const raw: unknown[] = account
    ? await m.query(
        `UPDATE people SET organisation_id = $2, group_id = $3, name = COALESCE($4, name),
                job_title = CASE WHEN $5 THEN $6 ELSE job_title END,
                disabled = false, joined_at = now(), updated_at = now()
          WHERE id = $1 AND organisation_id IS NULL
          RETURNING *`,
        [account.id, organisationId, fields.groupId, fields.name ?? null, fields.jobTitle !== undefined, fields.jobTitle ?? null],
      )
    : await m.query(
        `INSERT INTO people (email, name, job_title, organisation_id, group_id, joined_at)
         VALUES ($1, $2, $3, $4, $5, now())
         ON CONFLICT (lower(email)) DO NOTHING
         RETURNING *`,
        [address, fields.name ?? '', fields.jobTitle ?? null, organisationId, fields.groupId],
      );
  // TypeORM answers an UPDATE ... RETURNING as [rows, count], an INSERT as rows.
  const list = (account ? raw[0] : raw) as Array<Record<string, unknown>>;
  if (list.length === 0) return null;
  return hydrate(m, list[0]);
}

/** The person a `RETURNING *` row describes, converted as TypeORM converts a read (no second round trip to read it back). */
function hydrate(m: EntityManager, row: Record<string, unknown>): PersonEntity {
  const meta = m.connection.getMetadata(PersonEntity);
  const person = meta.create() as PersonEntity;
  for (const column of meta.columns) column.setEntityValue(person, m.connection.driver.prepareHydratedValue(row[column.databaseName], column));
  return person;
}

/**
 * Serialises every "add this address to this organisation" (REST `POST /v1/users`, SCIM
 * `POST /Users`) for one address until the transaction ends, so that the check for an existing
 * user and the write that follows see each other: without it, two adds racing through different
 * paths could each find nothing and then trip over the other's row.
 */
export async function lockAddress(m: EntityManager, organisationId: string, address: string): Promise<void> {
  await m.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 11))`, [`people-add:${organisationId}:${address.trim().toLowerCase()}`]);
}
