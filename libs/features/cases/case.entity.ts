import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type CaseStatus = 'open' | 'closed';

@Entity({ name: 'cases' })
export class CaseEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  /** The calling system's own reference; unique in the organisation. */
  @Column({ name: 'external_ref', type: 'text' })
  externalRef: string;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  @Column({ name: 'group_id', type: 'bigint', nullable: true })
  groupId: string | null;

  @Column({ type: 'text', default: 'open' })
  status: CaseStatus;

  @Column({ name: 'closed_at', type: 'timestamptz', precision: 3, nullable: true })
  closedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
