import { Injectable } from '@nestjs/common';
import { PreparedStatements, TransactionHost } from '@kernel/database';
import { EVENT_SCOPES, SUBSCRIBABLE_EVENTS } from '@kernel/events';
import { Clock } from '@kernel/core';
import { TraceContext } from '@kernel/telemetry';

/** Outbox rows taken per statement. */
export const RELAY_BATCH_SIZE = 500;

export interface RelayResult {
  /** Outbox rows marked relayed. */
  events: number;
  /** Deliveries made, each to be queued for its first attempt. */
  deliveryIds: string[];
  /** The same deliveries with their webhook, in the same order. */
  deliveries: Array<{ id: string; webhookId: string }>;
  /** The relayed events that carry a trace context (none when tracing is off), with the deliveries each made. */
  traced: TracedEvent[];
}

/** An outbox row relayed with the trace context of the request that made it. */
export interface TracedEvent extends TraceContext {
  id: string;
  event: string;
  deliveryIds: string[];
}

/**
 * Outbox → deliveries. One statement takes the oldest unrelayed rows (FOR UPDATE SKIP LOCKED,
 * so concurrent relays on several workers take disjoint rows), makes one delivery per active
 * webhook of every live connection of the organisation that subscribes to the event and holds
 * its scope, and marks the rows relayed — all or nothing. A crash before the commit leaves the
 * rows to be relayed again; the unique (event, webhook) index makes that a no-op for any
 * delivery already made, so a repeat is possible only downstream (a resent job), never a loss.
 */
@Injectable()
export class OutboxRelayService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly statements: PreparedStatements,
    private readonly clock: Clock,
  ) {}

  async relayBatch(limit = RELAY_BATCH_SIZE): Promise<RelayResult> {
    const now = this.clock.now().toISOString();
    const [row] = await this.statements.query(
      'outbox-relay',
      `WITH picked AS (
         SELECT id, organisation_id, event, occurred_at, data, traceparent, tracestate FROM outbox_events
          WHERE relayed_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED
       ), marked AS (
         UPDATE outbox_events o SET relayed_at = $2 FROM picked WHERE o.id = picked.id RETURNING o.id
       ), made AS (
         INSERT INTO webhook_deliveries
           (id, webhook_id, organisation_id, connection_id, outbox_event_id, event, occurred_at, data, state, next_attempt_at, created_at, updated_at,
            traceparent, tracestate)
         SELECT replace(gen_random_uuid()::text, '-', ''), w.id, w.organisation_id, w.connection_id, p.id, p.event, p.occurred_at, p.data,
                'queued', $2, $2, $2, p.traceparent, p.tracestate
           FROM picked p
           JOIN unnest($3::text[], $4::text[]) AS s (event, scope) ON s.event = p.event
           JOIN webhooks w ON w.organisation_id = p.organisation_id AND p.event = ANY (w.events)
                          AND w.deleted_at IS NULL AND w.switched_off_at IS NULL
           JOIN connections c ON c.id = w.connection_id AND c.revoked_at IS NULL AND s.scope = ANY (c.scopes)
          ORDER BY p.occurred_at, w.id
         ON CONFLICT (outbox_event_id, webhook_id) WHERE outbox_event_id IS NOT NULL DO NOTHING
         RETURNING id, webhook_id, outbox_event_id
       )
       SELECT (SELECT count(*)::int FROM marked) AS events, COALESCE((SELECT json_agg(json_build_array(id, webhook_id::text)) FROM made), '[]') AS made,
              (SELECT json_agg(json_build_object('id', p.id, 'event', p.event, 'traceparent', p.traceparent, 'tracestate', p.tracestate,
                                                 'deliveryIds', (SELECT COALESCE(json_agg(trim(d.id)), '[]') FROM made d WHERE d.outbox_event_id = p.id)))
                 FROM picked p WHERE p.traceparent IS NOT NULL) AS traced`,
      [limit, now, SUBSCRIBABLE_EVENTS, SUBSCRIBABLE_EVENTS.map((e) => EVENT_SCOPES[e])],
    );
    const deliveries = (row.made as Array<[string, string]>).map(([id, webhookId]) => ({ id: id.trim(), webhookId }));
    return { events: row.events as number, deliveryIds: deliveries.map((d) => d.id), deliveries, traced: (row.traced as TracedEvent[] | null) ?? [] };
  }

  /** The trace contexts stored with these deliveries (the jobs queued for them later continue the event's trace). */
  async traceContexts(ids: string[]): Promise<Map<string, TraceContext>> {
    if (ids.length === 0) return new Map();
    const rows: Array<TraceContext & { id: string }> = await this.tx.manager.query(
      `SELECT trim(id) AS id, traceparent, tracestate FROM webhook_deliveries WHERE id = ANY ($1::char(32)[]) AND traceparent IS NOT NULL`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, { traceparent: r.traceparent, tracestate: r.tracestate }]));
  }
}
