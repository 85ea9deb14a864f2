import type { AppConfig } from '@kernel/config';
import type { PubSub } from '@kernel/redis';
import { KeyCache, KEY_CACHE_MAX_ENTRIES } from './key-cache';

const entry = (keyId: string, connectionId = 'c1', organisationId = 'o1') => ({
  principal: {
    keyId,
    keyLastFour: '0000',
    connectionId,
    connectionName: 'n',
    connectionCreatedAt: new Date(0),
    organisationId,
    organisationName: 'o',
    scopes: [],
  },
  revoked: false,
  moduleOn: true,
  allowlist: [],
});

describe('KeyCache', () => {
  let ready = true;
  const make = (ttlSeconds = 60) =>
    new KeyCache(
      {
        get ready() {
          return ready;
        },
      } as unknown as PubSub,
      { authCacheTtlSeconds: ttlSeconds } as AppConfig,
    );

  beforeEach(() => {
    ready = true;
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => jest.useRealTimers());

  it('answers what was set until AUTH_CACHE_TTL_SECONDS have passed', () => {
    const cache = make(60);
    cache.set('h', entry('k1'), cache.currentGeneration);
    expect(cache.get('h')?.principal.keyId).toBe('k1');
    jest.advanceTimersByTime(59_000);
    expect(cache.get('h')).toBeDefined();
    jest.advanceTimersByTime(1_001);
    expect(cache.get('h')).toBeUndefined();
  });

  it('caches nothing with a TTL of 0, or while invalidations cannot be received', () => {
    const off = make(0);
    off.set('h', entry('k1'), off.currentGeneration);
    expect(off.get('h')).toBeUndefined();
    const cache = make();
    cache.set('h', entry('k1'), cache.currentGeneration);
    ready = false;
    expect(cache.get('h')).toBeUndefined();
    cache.set('h2', entry('k2'), cache.currentGeneration);
    ready = true;
    expect(cache.get('h2')).toBeUndefined();
  });

  it('drops the entries a key, connection or organisation change touches, and all on a policy change', () => {
    const cache = make();
    const fill = () => {
      for (const [h, k, c, o] of [
        ['a', 'k1', 'c1', 'o1'],
        ['b', 'k2', 'c1', 'o1'],
        ['c', 'k3', 'c2', 'o1'],
        ['d', 'k4', 'c3', 'o2'],
      ])
        cache.set(h, entry(k, c, o), cache.currentGeneration);
    };
    const held = () => ['a', 'b', 'c', 'd'].filter((h) => cache.get(h));
    fill();
    cache.invalidate({ kind: 'key', id: 'k1' });
    expect(held()).toEqual(['b', 'c', 'd']);
    cache.invalidate({ kind: 'connection', id: 'c1' });
    expect(held()).toEqual(['c', 'd']);
    cache.invalidate({ kind: 'organisation', id: 'o1' });
    expect(held()).toEqual(['d']);
    fill();
    cache.invalidate({ kind: 'all' });
    expect(held()).toEqual([]);
  });

  it('does not cache a lookup that raced an invalidation (generation), nor after a reset', () => {
    const cache = make();
    const before = cache.currentGeneration;
    cache.invalidate({ kind: 'key', id: 'other' });
    cache.set('h', entry('k1'), before);
    expect(cache.get('h')).toBeUndefined();
    const again = cache.currentGeneration;
    cache.clear();
    cache.set('h', entry('k1'), again);
    expect(cache.get('h')).toBeUndefined();
  });

  it(`holds at most ${KEY_CACHE_MAX_ENTRIES} entries, dropping the least recently used`, () => {
    const cache = make();
    for (let i = 0; i < KEY_CACHE_MAX_ENTRIES; i++) cache.set(`h${i}`, entry(`k${i}`), cache.currentGeneration);
    expect(cache.get('h0')).toBeDefined(); // used: h1 is now the least recently used
    cache.set('extra', entry('kx'), cache.currentGeneration);
    expect(cache.get('extra')).toBeDefined();
    expect(cache.get('h0')).toBeDefined();
    expect(cache.get('h1')).toBeUndefined();
  });
});
