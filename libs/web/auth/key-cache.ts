import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { AUTH_INVALIDATION_CHANNEL, AuthInvalidation } from '@kernel/core';
import { PubSub } from '@kernel/redis';
import { LRUCache } from 'lru-cache';
import type { CachedKey } from './principal';

/** Bounds the memory a flood of distinct valid keys can take; the least recently used go first. */
export const KEY_CACHE_MAX_ENTRIES = 20_000;

/**
 * Per-replica cache of key lookups, by key hash. It is only used while this replica receives
 * invalidation messages (PubSub.ready); every change to a key, connection, organisation or the
 * policy announces itself after commit and drops the affected entries on every replica. A
 * generation counter stops a lookup that raced an invalidation from caching what it read.
 * Entries expire after AUTH_CACHE_TTL_SECONDS (lru-cache's ttl, read against Date.now()).
 */
@Injectable()
export class KeyCache implements OnModuleInit {
  private readonly entries: LRUCache<string, CachedKey>;
  private generation = 0;

  constructor(
    private readonly pubSub: PubSub,
    private readonly config: AppConfig,
  ) {
    this.entries = new LRUCache<string, CachedKey>({
      max: KEY_CACHE_MAX_ENTRIES,
      ttl: Math.max(config.authCacheTtlSeconds, 1) * 1000, // 0 (off) is never stored; lru-cache needs a positive ttl
      ttlResolution: 0, // exact expiry, no cached clock reading
      perf: Date,
    });
  }

  async onModuleInit(): Promise<void> {
    if (this.config.authCacheTtlSeconds === 0) return;
    await this.pubSub.subscribe(
      AUTH_INVALIDATION_CHANNEL,
      (m) => this.invalidate(m as AuthInvalidation),
      () => this.clear(),
    );
  }

  private get usable(): boolean {
    return this.config.authCacheTtlSeconds > 0 && this.pubSub.ready;
  }

  /** The generation to pass back to {@link set} after a lookup. */
  get currentGeneration(): number {
    return this.generation;
  }

  get(hash: string): CachedKey | undefined {
    return this.usable ? this.entries.get(hash) : undefined;
  }

  set(hash: string, entry: CachedKey, generation: number): void {
    if (!this.usable || generation !== this.generation) return;
    this.entries.set(hash, entry);
  }

  invalidate(change: AuthInvalidation): void {
    this.generation++;
    if (change.kind === 'all') return this.entries.clear();
    for (const [hash, e] of this.entries.entries()) {
      const p = e.principal;
      const hit =
        (change.kind === 'key' && p.keyId === change.id) ||
        (change.kind === 'connection' && p.connectionId === change.id) ||
        (change.kind === 'organisation' && p.organisationId === change.id);
      if (hit) this.entries.delete(hash);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
