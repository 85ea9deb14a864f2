import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An account (one per address, platform-wide) and its membership: in at most one organisation,
 * in at most one group there. Removing a person from the organisation keeps the account.
 */
@Entity({ name: 'people' })
export class PersonEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'text' })
  email: string;

  @Column({ type: 'text', default: '' })
  name: string;

  @Column({ name: 'job_title', type: 'text', nullable: true })
  jobTitle: string | null;

  @Column({ name: 'organisation_id', type: 'bigint', nullable: true })
  organisationId: string | null;

  @Column({ name: 'group_id', type: 'bigint', nullable: true })
  groupId: string | null;

  @Column({ type: 'boolean', default: false })
  disabled: boolean;

  /** When the person joined the current organisation; lists are ordered by it. */
  @Column({ name: 'joined_at', type: 'timestamptz', precision: 3, nullable: true })
  joinedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
