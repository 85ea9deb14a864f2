import { Injectable } from '@nestjs/common';
import { isId, notFound, validationFailed, parseDomain } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { OrganisationDomainEntity } from './organisation-domain.entity';
import { OrganisationEntity } from './organisation.entity';

/**
 * An organisation's verified email domains (set by the operator): an address on one of them
 * that has no account is added directly instead of invited. A domain belongs to at most one
 * organisation.
 */
@Injectable()
export class DomainsService {
  constructor(private readonly tx: TransactionHost) {}

  async list(organisationId: string): Promise<string[]> {
    await this.organisation(organisationId);
    const rows = await this.tx.manager.getRepository(OrganisationDomainEntity).find({ where: { organisationId }, order: { domain: 'ASC' } });
    return rows.map((r) => r.domain);
  }

  /** Adds a verified domain; adding one the organisation already has is a no-op. */
  async add(organisationId: string, input: string): Promise<string> {
    const domain = parseDomain(input);
    return this.tx.run(async (m) => {
      await this.organisation(organisationId);
      await m.query(`INSERT INTO organisation_domains (organisation_id, domain) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [organisationId, domain]);
      const owner = await m.getRepository(OrganisationDomainEntity).findOneBy({ domain });
      if (owner?.organisationId !== organisationId) throw validationFailed('domain', `${domain} is verified by another organisation`);
      return domain;
    });
  }

  async remove(organisationId: string, input: string): Promise<void> {
    const domain = parseDomain(input);
    await this.organisation(organisationId);
    const result = await this.tx.run((m) => m.getRepository(OrganisationDomainEntity).delete({ organisationId, domain }));
    if (!result.affected) throw notFound('verified domain');
  }

  private async organisation(id: string): Promise<OrganisationEntity> {
    const org = isId(id) ? await this.tx.manager.getRepository(OrganisationEntity).findOneBy({ id }) : null;
    if (!org) throw notFound('organisation');
    return org;
  }
}
