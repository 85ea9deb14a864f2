import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** How an organisation's own system connects; belongs to the organisation, not a person. */
@Entity({ name: 'connections' })
export class ConnectionEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  scopes: string[];

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt: Date | null;
}
