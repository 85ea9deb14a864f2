import { MigrationInterface, QueryRunner } from 'typeorm';
import { CHANNELS } from './channels';

/**
 * Webhooks, their deliveries and each delivery's attempts, and a NOTIFY on new
 * outbox rows so the worker's relay wakes at once instead of polling.
 */
export class Webhooks1763770000000 implements MigrationInterface {
  name = 'Webhooks1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- A webhook belongs to a connection. Removed webhooks are kept (deleted_at) so their
      -- deliveries' log survives until the retention sweep.
      CREATE TABLE webhooks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL CHECK (cardinality(events) > 0),
        secret text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        -- First failure of the current unbroken run of failed attempts (tests excluded); null after a success.
        failing_since timestamptz(3),
        switched_off_at timestamptz(3),
        deleted_at timestamptz(3)
      );
      -- Lists, the ten-per-connection count and ownership checks.
      CREATE INDEX webhooks_connection_list_idx ON webhooks (connection_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
      -- The relay: the active webhooks of an organisation.
      CREATE INDEX webhooks_relay_idx ON webhooks (organisation_id) WHERE deleted_at IS NULL AND switched_off_at IS NULL;
      -- The switch-off check.
      CREATE INDEX webhooks_failing_idx ON webhooks (failing_since)
        WHERE failing_since IS NOT NULL AND switched_off_at IS NULL AND deleted_at IS NULL;

      -- One delivery per (event, webhook); its id is the body's id, constant across attempts.
      -- organisation_id and connection_id are copies (no foreign key: the webhook's cascades cover them
      -- and the hot insert path takes no extra parent-row locks).
      CREATE TABLE webhook_deliveries (
        id char(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
        webhook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        organisation_id bigint NOT NULL,
        connection_id bigint NOT NULL,
        outbox_event_id uuid,
        event text NOT NULL,
        occurred_at timestamptz(3) NOT NULL,
        data jsonb NOT NULL,
        is_test boolean NOT NULL DEFAULT false,
        state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'waiting', 'delivered', 'failed', 'given_up')),
        -- A resend starts a new series of attempts for the same delivery id.
        series int NOT NULL DEFAULT 1,
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz(3),
        give_up_reason text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        finished_at timestamptz(3),
        CHECK ((state IN ('delivered', 'failed', 'given_up')) = (finished_at IS NOT NULL)),
        CHECK ((state = 'given_up') = (give_up_reason IS NOT NULL))
      );
      -- The relay's guard: an outbox event makes at most one delivery per webhook, however often it is relayed.
      CREATE UNIQUE INDEX webhook_deliveries_event_idx ON webhook_deliveries (outbox_event_id, webhook_id) WHERE outbox_event_id IS NOT NULL;
      -- The reconciler: pending deliveries whose attempt is overdue (a lost job).
      CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE state IN ('queued', 'waiting');
      -- Giving up a webhook's pending deliveries (removal, switch-off).
      CREATE INDEX webhook_deliveries_webhook_pending_idx ON webhook_deliveries (webhook_id) WHERE state IN ('queued', 'waiting');
      -- A webhook's delivery log, newest first.
      CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
      -- The retention sweep.
      CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (finished_at) WHERE state IN ('delivered', 'failed', 'given_up');

      CREATE TABLE webhook_delivery_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id char(32) NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        series int NOT NULL,
        number int NOT NULL CHECK (number BETWEEN 1 AND 8),
        attempted_at timestamptz(3) NOT NULL,
        succeeded boolean NOT NULL,
        status int,
        duration_ms int NOT NULL,
        error text
      );
      CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, id);

      -- Wakes the relay when an event is written (delivered on commit; one per statement is enough).
      CREATE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${CHANNELS.outboxEvents}', '');
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
        FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER outbox_events_notify ON outbox_events;
      DROP FUNCTION outbox_events_notify();
      DROP TABLE webhook_delivery_attempts;
      DROP TABLE webhook_deliveries;
      DROP TABLE webhooks;
    `);
  }
}
