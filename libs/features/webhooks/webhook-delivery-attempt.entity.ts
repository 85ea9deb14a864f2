import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One POST of a delivery: its number in its series, when, the status, how long, what went wrong. */
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
}
