import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Traces: the W3C trace context (`traceparent`, `tracestate` headers' values)
 * of the request that made an event travels with it: written into its outbox row in the same
 * transaction, copied by the relay into each delivery, so every attempt of the delivery —
 * first, retried, resent or recovered — continues that trace. Null when tracing is off.
 */
export class TraceContext1764140000000 implements MigrationInterface {
  name = 'TraceContext1764140000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbox_events ADD COLUMN traceparent text, ADD COLUMN tracestate text;
      ALTER TABLE webhook_deliveries ADD COLUMN traceparent text, ADD COLUMN tracestate text;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_deliveries DROP COLUMN traceparent, DROP COLUMN tracestate;
      ALTER TABLE outbox_events DROP COLUMN traceparent, DROP COLUMN tracestate;
    `);
  }
}
