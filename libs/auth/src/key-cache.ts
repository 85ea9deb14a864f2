import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { AUTH_INVALIDATION_CHANNEL, AuthInvalidation } from '@app/core';
import { PubSub } from '@app/redis';
import type { CachedKey } from './principal';

const MAX_ENTRIES = 20_000;

/**
 * Per-replica cache of key lookups, by key hash. It is only used while this replica receives
 * invalidation messages (PubSub.ready); every change to a key, connection, organisation or the
 * policy announces itself after commit and drops the affected entries on every replica. A
 * generation counter stops a lookup that raced an invalidation from caching what it read.
 */
@Injectable()
export class KeyCache implements OnModuleInit {
  private readonly entries = new Map<string, CachedKey>();
  private generation = 0;

  constructor(
    private readonly pubSub: PubSub,
    private readonly config: AppConfig,
  ) {}

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
    if (!this.usable) return undefined;
    const entry = this.entries.get(hash);
    if (entry && entry.expiresAt <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry;
  }

  set(hash: string, entry: Omit<CachedKey, 'expiresAt'>, generation: number): void {
    if (!this.usable || generation !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { ...entry, expiresAt: Date.now() + this.config.authCacheTtlSeconds * 1000 });
  }

  invalidate(change: AuthInvalidation): void {
    this.generation++;
    if (change.kind === 'all') return this.entries.clear();
    for (const [hash, e] of this.entries) {
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
