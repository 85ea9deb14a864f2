import { Injectable } from '@nestjs/common';
import { isId, isScope, notFound, Scope, validationFailed } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { OrganisationsService } from '@features/organisations';
import { AuthInvalidationPublisher } from '@kernel/redis';
import { ConnectionEntity } from './connection.entity';

function parseScopes(scopes: string[]): Scope[] {
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw validationFailed('scopes', `unknown scope(s): ${unknown.join(', ')}`);
  return [...new Set(scopes as Scope[])].sort();
}

export interface ConnectionSummary {
  id: string;
  name: string;
  scopes: string[];
  createdAt: Date;
  revokedAt: Date | null;
  liveKeys: number;
  lastUsedAt: Date | null;
}

@Injectable()
export class ConnectionsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly organisations: OrganisationsService,
    private readonly invalidation: AuthInvalidationPublisher,
  ) {}

  async create(organisationId: string, name: string, scopes: string[]): Promise<ConnectionEntity> {
    const trimmed = name?.trim();
    if (!trimmed) throw validationFailed('name', 'must not be empty');
    const parsed = parseScopes(scopes);
    return this.tx.run(async (m) => {
      const org = await this.organisations.get(organisationId);
      const repo = m.getRepository(ConnectionEntity);
      return repo.save(repo.create({ organisationId: org.id, name: trimmed, scopes: parsed, revokedAt: null }));
    });
  }

  /** An organisation's connections, newest first, with their live keys and when a key last called (the console's list). */
  async listForOrganisation(organisationId: string): Promise<ConnectionSummary[]> {
    const rows: Array<{ id: string; name: string; scopes: string[]; created_at: Date; revoked_at: Date | null; live_keys: string; last_used_at: Date | null }> =
      await this.tx.manager.query(
        `SELECT c.id, c.name, c.scopes, c.created_at, c.revoked_at,
                count(k.id) FILTER (WHERE k.revoked_at IS NULL) AS live_keys, max(k.last_used_at) AS last_used_at
           FROM connections c LEFT JOIN api_keys k ON k.connection_id = c.id
          WHERE c.organisation_id = $1
          GROUP BY c.id
          ORDER BY c.revoked_at IS NOT NULL, c.id DESC`,
        [organisationId],
      );
    return rows.map((r) => ({
      id: String(r.id),
      name: r.name,
      scopes: r.scopes,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
      liveKeys: Number(r.live_keys),
      lastUsedAt: r.last_used_at,
    }));
  }

  /** A connection of this organisation; 404 not_found for another organisation's, as for one that does not exist. */
  async getInOrganisation(organisationId: string, id: string): Promise<ConnectionEntity> {
    const conn = await this.get(id);
    if (String(conn.organisationId) !== String(organisationId)) throw notFound('connection');
    return conn;
  }

  async get(id: string): Promise<ConnectionEntity> {
    const conn = isId(id) ? await this.tx.manager.getRepository(ConnectionEntity).findOneBy({ id }) : null;
    if (!conn) throw notFound('connection');
    return conn;
  }

  /** A change of scopes applies to every key of the connection from the next call. */
  async setScopes(id: string, scopes: string[]): Promise<ConnectionEntity> {
    const parsed = parseScopes(scopes);
    return this.tx.run(async (m) => {
      const conn = await this.get(id);
      if (conn.revokedAt) throw validationFailed('connection', 'is revoked');
      await m.getRepository(ConnectionEntity).update({ id: conn.id }, { scopes: parsed });
      await this.invalidation.announce({ kind: 'connection', id: conn.id });
      return { ...conn, scopes: parsed };
    });
  }

  /** Irreversible: every key of the connection stops at once. Revoking twice keeps the first time. */
  async revoke(id: string): Promise<ConnectionEntity> {
    return this.tx.run(async (m) => {
      const conn = await this.get(id);
      if (!conn.revokedAt) {
        conn.revokedAt = new Date();
        await m.getRepository(ConnectionEntity).update({ id: conn.id }, { revokedAt: () => 'now()' } as never);
      }
      await this.invalidation.announce({ kind: 'connection', id: conn.id });
      return this.get(conn.id);
    });
  }
}
