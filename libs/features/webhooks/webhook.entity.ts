import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A connection's webhook: an https address notified of the events it subscribes to. */
@Entity({ name: 'webhooks' })
export class WebhookEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @Column({ name: 'connection_id', type: 'bigint' })
  connectionId: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', array: true })
  events: string[];

  /** `whsec_…`; shown once, in the answer that creates the webhook. */
  @Column({ type: 'text', select: false })
  secret: string;

  /** The secret a rotation replaced, still signing (beside the current one) until `previousSecretExpiresAt`. */
  @Column({ name: 'previous_secret', type: 'text', nullable: true, select: false })
  previousSecret: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', precision: 3, nullable: true, select: false })
  previousSecretExpiresAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  /** First failure of the current unbroken run of failed attempts; null after a success. */
  @Column({ name: 'failing_since', type: 'timestamptz', precision: 3, nullable: true })
  failingSince: Date | null;

  @Column({ name: 'switched_off_at', type: 'timestamptz', precision: 3, nullable: true })
  switchedOffAt: Date | null;

  /** Set when removed; the row stays for its deliveries' log. */
  @Column({ name: 'deleted_at', type: 'timestamptz', precision: 3, nullable: true })
  deletedAt: Date | null;
}
