import { Injectable } from '@nestjs/common';
import { normaliseCidr as normaliseParsedCidr } from '@kernel/config';
import { isId, notFound, validationFailed, CURRENT_POLICY_VERSION_SQL } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { AuthInvalidationPublisher } from '@kernel/redis';
import { OrganisationEntity } from './organisation.entity';
import { PolicyVersionEntity } from './policy-version.entity';

/** The allow-list's spelling of a CIDR (or of a bare address, one host); 422 on anything else. */
export function normaliseCidr(input: string): string {
  try {
    return normaliseParsedCidr(input);
  } catch {
    throw validationFailed('cidr', `"${input}" is not an IPv4 or IPv6 CIDR`);
  }
}

/** The organisation settings the service (the operator) controls. */
@Injectable()
export class OrganisationsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly invalidation: AuthInvalidationPublisher,
  ) {}

  async create(name: string): Promise<OrganisationEntity> {
    const trimmed = name?.trim();
    if (!trimmed) throw validationFailed('name', 'must not be empty');
    return this.tx.run(async (m) => {
      const current = await this.currentPolicyVersion(true);
      const repo = m.getRepository(OrganisationEntity);
      return repo.save(repo.create({ name: trimmed, moduleEnabled: true, acceptedPolicyVersion: current }));
    });
  }

  async get(id: string): Promise<OrganisationEntity> {
    const org = isId(id) ? await this.tx.manager.getRepository(OrganisationEntity).findOneBy({ id }) : null;
    if (!org) throw notFound('organisation');
    return org;
  }

  setModule(id: string, on: boolean): Promise<OrganisationEntity> {
    return this.update(id, { moduleEnabled: on });
  }

  /** accept: the current version; withdraw: none. Either way keys are kept. */
  async setPolicy(id: string, accept: boolean): Promise<OrganisationEntity> {
    return this.tx.run(async () => this.update(id, { acceptedPolicyVersion: accept ? await this.currentPolicyVersion(true) : null }));
  }

  async setAllowlist(id: string, cidrs: string[]): Promise<OrganisationEntity> {
    return this.update(id, { ipAllowlist: [...new Set(cidrs.map(normaliseCidr))] });
  }

  setConversationReview(id: string, on: boolean): Promise<OrganisationEntity> {
    return this.update(id, { conversationReview: on });
  }

  /** `shared`: take a share lock so a concurrent publish waits for this transaction (or vice versa). */
  async currentPolicyVersion(shared = false): Promise<number> {
    const m = this.tx.manager;
    if (shared && this.tx.inTransaction) await m.query('LOCK TABLE integration_policy_versions IN SHARE MODE');
    const [row] = await m.query(`SELECT ${CURRENT_POLICY_VERSION_SQL} AS v`);
    return row.v;
  }

  /** Publishes a new policy version: every organisation answers module_off until it accepts it. */
  async publishPolicyVersion(): Promise<number> {
    return this.tx.run(async (m) => {
      // Exclusive: two publishes run one after the other, and acceptances in flight finish first.
      await m.query('LOCK TABLE integration_policy_versions IN EXCLUSIVE MODE');
      const next = (await this.currentPolicyVersion()) + 1;
      await m.getRepository(PolicyVersionEntity).insert({ version: next });
      await this.invalidation.announce({ kind: 'all' });
      return next;
    });
  }

  private async update(id: string, patch: Partial<OrganisationEntity>): Promise<OrganisationEntity> {
    return this.tx.run(async (m) => {
      const org = await this.get(id);
      const repo = m.getRepository(OrganisationEntity);
      await repo.update({ id: org.id }, { ...patch, updatedAt: () => 'now()' } as never);
      await this.invalidation.announce({ kind: 'organisation', id: org.id });
      return (await repo.findOneBy({ id: org.id })) as OrganisationEntity;
    });
  }
}
