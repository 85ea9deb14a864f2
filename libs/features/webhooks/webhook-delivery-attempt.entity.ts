import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { ErrorClass, Headers } from './model/exchange';

/**
 * One POST of a delivery: its number in its series, when, the status, how long, what went wrong,
 * and the exchange (model/exchange): the headers sent, the answer's headers and the start of its body.
 */
@Entity({ name: 'webhook_delivery_attempts' })
export class WebhookDeliveryAttemptEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'delivery_id', type: 'char', length: 32 })
  deliveryId: string;

  @Column({ type: 'int' })
  series: number;

  @Column({ type: 'int' })
  number: number;

  @Column({ name: 'attempted_at', type: 'timestamptz', precision: 3 })
  attemptedAt: Date;

  @Column({ type: 'boolean' })
  succeeded: boolean;

  /** Null when the address did not answer. */
  @Column({ type: 'int', nullable: true })
  status: number | null;

  @Column({ name: 'duration_ms', type: 'int' })
  durationMs: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Null for attempts logged before the exchange was kept, and when nothing was sent. */
  @Column({ name: 'request_headers', type: 'jsonb', nullable: true })
  requestHeaders: Headers | null;

  @Column({ name: 'response_headers', type: 'jsonb', nullable: true })
  responseHeaders: Headers | null;

  /** The first 8 KiB of the answer's body. */
  @Column({ name: 'response_body', type: 'bytea', nullable: true })
  responseBody: Buffer | null;

  @Column({ name: 'response_body_size', type: 'int', nullable: true })
  responseBodySize: number | null;

  @Column({ name: 'response_body_truncated', type: 'boolean', default: false })
  responseBodyTruncated: boolean;

  @Column({ name: 'error_class', type: 'text', nullable: true })
  errorClass: ErrorClass | null;
}
