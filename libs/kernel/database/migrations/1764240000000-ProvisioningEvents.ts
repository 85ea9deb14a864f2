import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The provisioning log: one row per SCIM request that changed something or was refused, kept 90
 * days. Written on the SCIM hot path, so it carries what the readers need and no more: the
 * organisation's log newest first (the console and `GET /v1/provisioning-events`), the refusals
 * alone (a partial index, so successes never write it), and a BRIN on the time for the refusal
 * warning's last hour and the sweep (append-only, nearly free to keep). No foreign keys, as on
 * webhook_deliveries: each would be a lookup and a row lock per insert, and organisations and
 * connections are never deleted (rows go with the 90-day sweep). The warning's
 * once-a-day claim is a row per connection holding when it was last sent: an upsert that only
 * moves a time older than a day lets one worker win.
 */
export class ProvisioningEvents1764240000000 implements MigrationInterface {
  name = 'ProvisioningEvents1764240000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE provisioning_events (
         id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         organisation_id bigint NOT NULL,
         connection_id bigint NOT NULL,
         created_at timestamptz(3) NOT NULL DEFAULT now(),
         identity_provider text NOT NULL,
         user_agent text,
         operation text NOT NULL,
         resource_type text,
         resource_id text,
         outcome text NOT NULL,
         status smallint NOT NULL,
         scim_type text,
         detail text,
         changes jsonb,
         request_id text
       )`,
    );
    await q.query(`CREATE INDEX provisioning_events_list_idx ON provisioning_events (organisation_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX provisioning_events_refused_idx ON provisioning_events (organisation_id, created_at DESC, id DESC) WHERE outcome = 'refused'`);
    await q.query(`CREATE INDEX provisioning_events_time_brin ON provisioning_events USING brin (created_at)`);
    await q.query(
      `CREATE TABLE scim_refusal_warnings (
         connection_id bigint PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
         sent_at timestamptz(3) NOT NULL
       )`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE scim_refusal_warnings`);
    await q.query(`DROP TABLE provisioning_events`);
  }
}
