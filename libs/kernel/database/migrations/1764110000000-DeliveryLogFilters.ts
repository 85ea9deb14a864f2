import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Integrations section filters a webhook's delivery log by state and by event, keyset-paginated
 * newest first: each filter gets an index in the log's order, so a filtered page (and the bulk
 * resend's pick of failed and given-up deliveries since a time) reads only its own rows however
 * long the log is.
 */
export class DeliveryLogFilters1764110000000 implements MigrationInterface {
  name = 'DeliveryLogFilters1764110000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_state_list_idx ON webhook_deliveries (webhook_id, state, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_event_list_idx ON webhook_deliveries (webhook_id, event, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_event_list_idx`);
    await q.query(`DROP INDEX webhook_deliveries_state_list_idx`);
  }
}
