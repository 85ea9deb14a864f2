import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'organisations' })
export class OrganisationEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  /** The integrations module; off makes every connection answer 403 module_off. */
  @Column({ name: 'module_enabled', type: 'boolean', default: true })
  moduleEnabled: boolean;

  /** Version of the integrations data policy the organisation accepted; null when withdrawn. */
  @Column({ name: 'accepted_policy_version', type: 'int', nullable: true })
  acceptedPolicyVersion: number | null;

  /** CIDRs (IPv4 and IPv6) the organisation may be reached from; empty means anywhere. */
  @Column({ name: 'ip_allowlist', type: 'text', array: true, default: () => "'{}'" })
  ipAllowlist: string[];

  @Column({ name: 'conversation_review', type: 'boolean', default: false })
  conversationReview: boolean;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
