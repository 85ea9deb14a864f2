import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Published versions of the integrations data policy; the highest is current. */
@Entity({ name: 'integration_policy_versions' })
export class PolicyVersionEntity {
  @PrimaryColumn({ type: 'int' })
  version: number;

  @Column({ name: 'published_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  publishedAt: Date;
}
