import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'groups' })
export class GroupEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @Column({ type: 'text' })
  name: string;

  /** Permission codes, kept sorted. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  permissions: string[];

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  updatedAt: Date;
}
