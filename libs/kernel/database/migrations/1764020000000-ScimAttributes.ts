import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SCIM User attributes the platform has no field for (nickName, name.middleName, phoneNumbers,
 * addresses, the enterprise costCenter…), kept beside the person as written, with the
 * displayName SCIM last wrote. Null on a row SCIM never wrote: such a user
 * is answered from the platform's fields, as before.
 */
export class ScimAttributes1764020000000 implements MigrationInterface {
  name = 'ScimAttributes1764020000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE scim_users ADD COLUMN attributes jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE scim_users DROP COLUMN attributes`);
  }
}
