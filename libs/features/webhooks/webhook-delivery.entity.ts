import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { GiveUpReason } from './model/give-up';

/**
 * queued: waiting for the first attempt of its series; waiting: for a retry; delivered: a 2xx;
 * failed: no further attempt (the eighth failed, or a test's only attempt); given_up: stopped
 * before an attempt, with the reason.
 */
export type DeliveryState = 'queued' | 'waiting' | 'delivered' | 'failed' | 'given_up';

/** One event for one webhook; `id` is the body's id, constant across attempts and resends. */
@Entity({ name: 'webhook_deliveries' })
export class WebhookDeliveryEntity {
  @PrimaryColumn({ type: 'char', length: 32 })
  id: string;

  @Column({ name: 'webhook_id', type: 'bigint' })
  webhookId: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @Column({ name: 'connection_id', type: 'bigint' })
  connectionId: string;

  @Column({ name: 'outbox_event_id', type: 'uuid', nullable: true })
  outboxEventId: string | null;

  @Column({ type: 'text' })
  event: string;

  @Column({ name: 'occurred_at', type: 'timestamptz', precision: 3 })
  occurredAt: Date;

  @Column({ type: 'jsonb' })
  data: Record<string, string>;

  @Column({ name: 'is_test', type: 'boolean', default: false })
  isTest: boolean;

  @Column({ type: 'text', default: 'queued' })
  state: DeliveryState;

  @Column({ type: 'int', default: 1 })
  series: number;

  /** Attempts made in the current series. */
  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'give_up_reason', type: 'text', nullable: true })
  giveUpReason: GiveUpReason | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', precision: 3, nullable: true })
  finishedAt: Date | null;

  /** W3C trace context of the request that made the event (null when tracing was off): each attempt continues its trace. */
  @Column({ name: 'traceparent', type: 'text', nullable: true, select: false })
  traceparent: string | null;

  @Column({ name: 'tracestate', type: 'text', nullable: true, select: false })
  tracestate: string | null;
}
