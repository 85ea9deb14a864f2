import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type InvitationStatus = 'pending' | 'accepted' | 'withdrawn';
export type InvitationSource = 'api' | 'scim' | 'console';

@Entity({ name: 'invitations' })
export class InvitationEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @Column({ type: 'text' })
  email: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ name: 'job_title', type: 'text', nullable: true })
  jobTitle: string | null;

  @Column({ name: 'group_id', type: 'bigint', nullable: true })
  groupId: string | null;

  /** SHA-256 of the accept token; the token itself is only in the email. */
  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @Column({ type: 'text' })
  source: InvitationSource;

  @Column({ name: 'connection_id', type: 'bigint', nullable: true })
  connectionId: string | null;

  @Column({ type: 'text', default: 'pending' })
  status: InvitationStatus;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ name: 'answered_at', type: 'timestamptz', precision: 3, nullable: true })
  answeredAt: Date | null;

  /** Set by the database at every change it shows (a trigger): see docs/partners/sync.md. */
  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
