import { Injectable } from '@nestjs/common';
import { currentTraceContext } from '@kernel/telemetry';
import { EntityManager } from 'typeorm';
import { EventName, EventPayloads } from './events';

export interface OutboxRow {
  id: string;
  organisation_id: string;
  event: EventName;
  occurred_at: Date;
  data: Record<string, string>;
  relayed_at: Date | null;
}

/**
 * The one way to emit an event: an outbox row written with the caller's transaction manager,
 * so the change and its event commit together or not at all. A relay moves rows on. The row
 * carries the active trace context (null when tracing is off), so the deliveries it makes and
 * their attempts continue the trace of the request that made the event.
 */
@Injectable()
export class Outbox {
  async emit<E extends EventName>(manager: EntityManager, organisationId: string, event: E, data: EventPayloads[E], occurredAt?: Date): Promise<string> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error(`outbox: ${event} must be emitted inside the transaction of the change that causes it`);
    }
    const trace = currentTraceContext();
    const [row] = await manager.query(
      `INSERT INTO outbox_events (organisation_id, event, data, occurred_at, traceparent, tracestate)
       VALUES ($1, $2, $3, COALESCE($4::timestamptz, now()), $5, $6) RETURNING id`,
      [organisationId, event, JSON.stringify(data), occurredAt?.toISOString() ?? null, trace.traceparent, trace.tracestate],
    );
    return row.id as string;
  }

  /**
   * A change and its event in one statement (one round trip; atomic without a transaction of its
   * own): `change` is a data-modifying statement with RETURNING (e.g. `UPDATE … RETURNING id`) over
   * `params` ($1…$n); the event's row is written, as `emit` writes it, only if `change` returned a
   * row. Answers whether it did.
   */
  async emitIfChanged<E extends EventName>(
    manager: EntityManager,
    change: string,
    params: unknown[],
    organisationId: string,
    event: E,
    data: EventPayloads[E],
  ): Promise<boolean> {
    const trace = currentTraceContext();
    const n = params.length;
    const rows: unknown[] = await manager.query(
      `WITH changed AS (${change})
       INSERT INTO outbox_events (organisation_id, event, data, occurred_at, traceparent, tracestate)
       SELECT $${n + 1}::bigint, $${n + 2}::text, $${n + 3}::jsonb, now(), $${n + 4}::text, $${n + 5}::text WHERE EXISTS (SELECT 1 FROM changed) RETURNING id`,
      [...params, organisationId, event, JSON.stringify(data), trace.traceparent, trace.tracestate],
    );
    return rows.length > 0;
  }

  /**
   * Like emitIfChanged for many rows at once, as a statement for the caller to run (on its
   * transaction's manager, or as a prepared statement): `change` (a data-modifying statement over
   * `params`) returns, for each row it changed, the event's `organisation_id`, `data` (jsonb: the
   * payload of `event`, as emit would write it) and the trace context (`traceparent`, `tracestate`,
   * null when none) of the work that caused it; one `event` row is written for each, in the same
   * statement, which returns the `data` of the events written.
   */
  forEachChanged<E extends EventName>(change: string, params: unknown[], event: E): { text: string; values: unknown[] } {
    return {
      text: `WITH changed AS (${change})
       INSERT INTO outbox_events (organisation_id, event, data, occurred_at, traceparent, tracestate)
       SELECT organisation_id, $${params.length + 1}::text, data, now(), traceparent, tracestate FROM changed RETURNING data`,
      values: [...params, event],
    };
  }
}
