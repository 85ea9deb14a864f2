import { Injectable, Logger } from '@nestjs/common';
import { hashKey, KEY_PATTERN, KeyLookup } from '@kernel/core';
import { parseCidrs } from './client-ip';
import { KeyCache } from './key-cache';
import type { CachedKey } from './principal';

/** Finds what a key stands for (cache, else one indexed lookup) and keeps last_used_at current. */
@Injectable()
export class KeyAuthenticator {
  private readonly logger = new Logger(KeyAuthenticator.name);
  private readonly touchedMinute = new Map<string, number>();

  constructor(
    private readonly keys: KeyLookup,
    private readonly cache: KeyCache,
  ) {}

  /**
   * null when the token is not a well-formed key that exists. Answers synchronously from the
   * cache (the common case: no promise, no extra turn of the event loop), else with a promise
   * of the one indexed lookup.
   */
  lookup(token: string): CachedKey | null | Promise<CachedKey | null> {
    if (!KEY_PATTERN.test(token)) return null;
    const hash = hashKey(token);
    return this.cache.get(hash) ?? this.load(hash);
  }

  private async load(hash: string): Promise<CachedKey | null> {
    const generation = this.cache.currentGeneration;
    const row = await this.keys.findForAuth(hash);
    if (!row) return null;
    const entry = {
      principal: {
        keyId: row.keyId,
        keyLastFour: row.keyLastFour,
        connectionId: row.connectionId,
        connectionName: row.connectionName,
        connectionCreatedAt: row.connectionCreatedAt,
        organisationId: row.organisationId,
        organisationName: row.organisationName,
        scopes: row.scopes,
      },
      revoked: row.keyRevoked || row.connectionRevoked,
      moduleOn: row.moduleEnabled && row.policyAccepted,
      allowlist: parseCidrs(row.ipAllowlist),
    };
    this.cache.set(hash, entry, generation);
    return entry;
  }

  /** At most one write a minute per key and replica; the SQL itself skips a same-minute write. */
  touch(keyId: string): void {
    const minute = Math.floor(Date.now() / 60_000);
    if (this.touchedMinute.get(keyId) === minute) return;
    if (this.touchedMinute.size > 50_000) this.touchedMinute.clear();
    this.touchedMinute.set(keyId, minute);
    this.keys.touchLastUsed(keyId).catch((err: Error) => this.logger.warn(`last_used_at not written: ${err.message}`));
  }
}
