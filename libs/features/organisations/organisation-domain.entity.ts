import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An email domain the organisation has verified: new addresses on it are added directly. */
@Entity({ name: 'organisation_domains' })
export class OrganisationDomainEntity {
  @PrimaryColumn({ name: 'organisation_id', type: 'bigint' })
  organisationId: string;

  @PrimaryColumn({ type: 'text' })
  domain: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt: Date;
}
