import { Injectable } from '@nestjs/common';
import {
  DomainError,
  generateKey,
  hashKey,
  isId,
  KeyLookup,
  KeyPrincipalRow,
  lastFour,
  notFound,
  CURRENT_POLICY_VERSION_SQL,
  policyAccepted,
} from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { AuthInvalidationPublisher } from '@kernel/redis';
import { ApiKeyEntity } from './api-key.entity';
import { ConnectionEntity } from './connection.entity';

export const MAX_LIVE_KEYS = 2;

/** Why a key was not made: the pages explain each in their own words (the API answers 422 validation_failed either way). */
export type KeyRefusalReason = 'live_key_limit' | 'connection_revoked';

/** A key that could not be made, with its reason; a `validation_failed` refusal like any other to the API and the CLI. */
export class KeyRefusal extends DomainError {
  constructor(
    readonly reason: KeyRefusalReason,
    message: string,
  ) {
    super('validation_failed', message);
    this.name = 'KeyRefusal';
  }
}

export interface KeyListing {
  id: string;
  last_four: string;
  created_at: string;
  last_used_at: string | null;
  state: 'live' | 'revoked';
}

@Injectable()
export class ApiKeysService implements KeyLookup {
  constructor(
    private readonly tx: TransactionHost,
    private readonly invalidation: AuthInvalidationPublisher,
  ) {}

  /** Makes a key; the clear key is returned once and never stored. A third live key is refused. */
  async create(connectionId: string): Promise<{ id: string; key: string; lastFour: string }> {
    return this.tx.run(async (m) => {
      // The row lock serialises concurrent creations, so two callers cannot both pass the count.
      const conn = isId(connectionId)
        ? await m.getRepository(ConnectionEntity).findOne({ where: { id: connectionId }, lock: { mode: 'pessimistic_write' } })
        : null;
      if (!conn) throw notFound('connection');
      if (conn.revokedAt) throw new KeyRefusal('connection_revoked', 'connection: is revoked; it cannot hold new keys');
      const liveCount = await m
        .getRepository(ApiKeyEntity)
        .createQueryBuilder('k')
        .where('k.connection_id = :id AND k.revoked_at IS NULL', { id: conn.id })
        .getCount();
      if (liveCount >= MAX_LIVE_KEYS) {
        throw new KeyRefusal('live_key_limit', `connection: already holds ${MAX_LIVE_KEYS} live keys; revoke one first`);
      }
      const key = generateKey();
      const saved = await m
        .getRepository(ApiKeyEntity)
        .save(m.getRepository(ApiKeyEntity).create({ connectionId: conn.id, keyHash: hashKey(key), lastFour: lastFour(key) }));
      return { id: saved.id, key, lastFour: saved.lastFour };
    });
  }

  /** Irreversible; the other live key of the connection keeps working. */
  async revoke(keyId: string): Promise<void> {
    await this.tx.run(async (m) => {
      const key = isId(keyId) ? await m.getRepository(ApiKeyEntity).findOneBy({ id: keyId }) : null;
      if (!key) throw notFound('key');
      if (!key.revokedAt) await m.getRepository(ApiKeyEntity).update({ id: key.id }, { revokedAt: () => 'now()' } as never);
      await this.invalidation.announce({ kind: 'key', id: key.id });
    });
  }

  async list(connectionId: string): Promise<KeyListing[]> {
    const conn = isId(connectionId) ? await this.tx.manager.getRepository(ConnectionEntity).findOneBy({ id: connectionId }) : null;
    if (!conn) throw notFound('connection');
    const rows = await this.tx.manager.getRepository(ApiKeyEntity).find({ where: { connectionId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map((k) => ({
      id: k.id,
      last_four: k.lastFour,
      created_at: k.createdAt.toISOString(),
      last_used_at: k.lastUsedAt?.toISOString() ?? null,
      state: k.revokedAt ? 'revoked' : 'live',
    }));
  }

  /** One indexed lookup by hash, joined to its connection and organisation. */
  async findForAuth(keyHash: string): Promise<KeyPrincipalRow | null> {
    const rows: Array<Record<string, unknown>> = await this.tx.manager.query(
      `SELECT k.id AS key_id, k.last_four, k.revoked_at IS NOT NULL AS key_revoked,
              c.id AS connection_id, c.name AS connection_name, c.created_at AS connection_created_at,
              c.revoked_at IS NOT NULL AS connection_revoked, c.scopes,
              o.id AS organisation_id, o.name AS organisation_name, o.module_enabled, o.ip_allowlist,
              o.accepted_policy_version, ${CURRENT_POLICY_VERSION_SQL} AS policy_version
         FROM api_keys k
         JOIN connections c ON c.id = k.connection_id
         JOIN organisations o ON o.id = c.organisation_id
        WHERE k.key_hash = $1`,
      [keyHash],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      keyId: String(r.key_id),
      keyLastFour: String(r.last_four),
      keyRevoked: Boolean(r.key_revoked),
      connectionId: String(r.connection_id),
      connectionName: String(r.connection_name),
      connectionCreatedAt: r.connection_created_at as Date,
      connectionRevoked: Boolean(r.connection_revoked),
      scopes: r.scopes as string[],
      organisationId: String(r.organisation_id),
      organisationName: String(r.organisation_name),
      moduleEnabled: Boolean(r.module_enabled),
      policyAccepted: policyAccepted(r.accepted_policy_version as number | null, Number(r.policy_version)),
      ipAllowlist: r.ip_allowlist as string[],
    };
  }

  /**
   * Keeps last_used_at current to the minute: the conditional update writes at most once a
   * minute per key however many calls and replicas there are.
   */
  async touchLastUsed(keyId: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < date_trunc('minute', now()))`,
      [keyId],
    );
  }
}
