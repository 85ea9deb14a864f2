import { Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '@kernel/core';
import { CursorCodec, TransactionHost } from '@kernel/database';
import { AddressPolicy, NOT_PUBLIC } from './address-policy';
import { HostResolver, ResolvedAddress } from './host-resolver';
import { MAX_WEBHOOKS_PER_CONNECTION, WebhookOwner, WebhooksService } from './webhooks.service';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const owner: WebhookOwner = { organisationId: '1', connectionId: '10', scopes: ['conversations:read', 'summaries:read'] };

interface HookRow {
  id: string;
  organisation_id: string;
  connection_id: string;
  url: string;
  events: string[];
  secret: string;
  created_at: string;
  failing_since: null;
  switched_off_at: null;
  deleted_at: string | null;
}

/**
 * In-memory webhooks and deliveries answering the queries WebhooksService makes. `onLock` runs
 * when the connection's row is locked: a concurrent creation that got there first.
 */
class FakeDb {
  hooks: HookRow[] = [];
  deliveries: Array<{ webhookId: string; state: string; reason: string | null }> = [];
  log: string[] = [];
  onLock?: () => void;
  private nextId = 1;

  hook(connectionId: string, over: Partial<HookRow> = {}): HookRow {
    const row: HookRow = {
      id: String(this.nextId++),
      organisation_id: owner.organisationId,
      connection_id: connectionId,
      url: 'https://hooks.example/x',
      events: ['conversation.ended'],
      secret: 'whsec_old',
      created_at: NOW.toISOString(),
      failing_since: null,
      switched_off_at: null,
      deleted_at: null,
      ...over,
    };
    this.hooks.push(row);
    return row;
  }

  private live = (connectionId: string) => this.hooks.filter((h) => h.connection_id === connectionId && h.deleted_at === null);

  readonly manager = {
    query: async (sql: string, params: unknown[]) => {
      if (/^SELECT id FROM connections WHERE id = \$1 FOR UPDATE/.test(sql)) {
        this.log.push('lock');
        this.onLock?.();
        return [{ id: params[0] }];
      }
      if (/^SELECT count\(\*\)::int AS n FROM webhooks WHERE connection_id = \$1 AND deleted_at IS NULL/.test(sql)) {
        this.log.push('count');
        return [{ n: this.live(params[0] as string).length }];
      }
      if (/^INSERT INTO webhooks/.test(sql)) {
        this.log.push('insert');
        const [organisationId, connectionId, url, events, secret, createdAt] = params as [string, string, string, string[], string, string];
        return [this.hook(connectionId, { organisation_id: organisationId, url, events, secret, created_at: createdAt })];
      }
      if (/FROM webhooks WHERE id = \$1 AND connection_id = \$2 AND deleted_at IS NULL/.test(sql)) {
        return this.live(params[1] as string).filter((h) => h.id === params[0]);
      }
      if (/^WITH gone AS \(\s*UPDATE webhooks SET deleted_at = \$3, secret = ''/.test(sql)) {
        const gone = this.live(params[1] as string).filter((h) => h.id === params[0]);
        for (const h of gone) Object.assign(h, { deleted_at: params[2], secret: '' });
        return gone.map((h) => ({ id: h.id }));
      }
      if (/^UPDATE webhook_deliveries SET state = 'given_up'/.test(sql)) {
        const pending = this.deliveries.filter((d) => d.webhookId === params[0] && ['queued', 'waiting'].includes(d.state));
        for (const d of pending) Object.assign(d, { state: 'given_up', reason: params[1] });
        return [[], pending.length];
      }
      throw new Error(`unexpected query: ${sql}`);
    },
  } as unknown as EntityManager;
}

/** Addresses under 10/8 and 127/8 are not public; a name resolves as `names` says (absent: the lookup fails). */
const setup = (names: Record<string, string[]> = { 'hooks.example': ['203.0.113.7'] }) => {
  const db = new FakeDb();
  const tx = { manager: db.manager, run: <T>(fn: (m: EntityManager) => Promise<T>) => fn(db.manager) } as unknown as TransactionHost;
  const clock: Clock = { now: () => NOW };
  const policy = {
    problem: (address: string) => (/^(10|127)\./.test(address) ? 'a private address' : null),
  } as unknown as AddressPolicy;
  const lookups: string[] = [];
  const resolver = {
    resolve: async (hostname: string): Promise<ResolvedAddress[]> => {
      lookups.push(hostname);
      const found = names[hostname];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: 4 }));
    },
  } as HostResolver;
  return { db, lookups, service: new WebhooksService(tx, clock, policy, resolver, {} as CursorCodec) };
};

const refusal = async (p: Promise<unknown>) => {
  const err = (await p.then(
    () => null,
    (e: unknown) => e,
  )) as { code?: string; message?: string } | null;
  return err && { code: err.code, message: err.message };
};

beforeEach(() => {
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

describe('WebhooksService.create', () => {
  it('adds the webhook with its events deduplicated, answering a new secret once', async () => {
    const { db, service } = setup();
    const { webhook, secret } = await service.create(owner, {
      url: 'https://hooks.example/in',
      events: ['conversation.ended', 'summary.ready', 'conversation.ended'],
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(webhook).toMatchObject({ connectionId: '10', organisationId: '1', url: 'https://hooks.example/in', createdAt: NOW });
    expect(webhook.events).toEqual(['conversation.ended', 'summary.ready']);
    expect(db.hooks[0].secret).toBe(secret);
    expect(Object.values(webhook)).not.toContain(secret);
  });

  it('gives every webhook its own secret', async () => {
    const { service } = setup();
    const a = await service.create(owner, { url: 'https://hooks.example/a', events: ['conversation.ended'] });
    const b = await service.create(owner, { url: 'https://hooks.example/b', events: ['conversation.ended'] });
    expect(a.secret).not.toBe(b.secret);
  });

  it('refuses no events, webhook.test, an unknown event and one whose scope the connection lacks, writing nothing', async () => {
    const { db, lookups, service } = setup();
    const url = 'https://hooks.example/in';
    const cases: Array<[unknown, RegExp]> = [
      [[], /at least one event/],
      [undefined, /at least one event/],
      [['webhook.test'], /webhook\.test/],
      [['conversation.started'], /"conversation\.started" is not an event/],
      [['conversation.ended', 'user.joined'], /"user\.joined" needs the scope users:read/],
    ];
    for (const [events, message] of cases) {
      const err = await refusal(service.create(owner, { url, events: events as string[] }));
      expect(err?.code).toBe('validation_failed');
      expect(err?.message).toMatch(/^events: /);
      expect(err?.message).toMatch(message);
    }
    expect(db.hooks).toHaveLength(0);
    expect(lookups).toHaveLength(0);
  });

  it(`allows the ${MAX_WEBHOOKS_PER_CONNECTION}th webhook and refuses the next; removed ones and other connections' do not count`, async () => {
    const { db, service } = setup();
    for (let i = 0; i < MAX_WEBHOOKS_PER_CONNECTION - 1; i++) db.hook(owner.connectionId);
    db.hook(owner.connectionId, { deleted_at: NOW.toISOString() });
    db.hook('11');
    const input = { url: 'https://hooks.example/in', events: ['conversation.ended'] };
    await expect(service.create(owner, input)).resolves.toMatchObject({ webhook: { connectionId: '10' } });
    expect(await refusal(service.create(owner, input))).toEqual({
      code: 'validation_failed',
      message: expect.stringMatching(new RegExp(`^connection: already holds ${MAX_WEBHOOKS_PER_CONNECTION} webhooks`)),
    });
    expect(db.hooks.filter((h) => h.connection_id === '10' && h.deleted_at === null)).toHaveLength(MAX_WEBHOOKS_PER_CONNECTION);
  });

  it("counts again under the connection's lock, so a creation that got there first takes the last place", async () => {
    const { db, service } = setup();
    for (let i = 0; i < MAX_WEBHOOKS_PER_CONNECTION - 1; i++) db.hook(owner.connectionId);
    db.onLock = () => {
      db.onLock = undefined;
      db.hook(owner.connectionId);
    };
    expect((await refusal(service.create(owner, { url: 'https://hooks.example/in', events: ['conversation.ended'] })))?.code).toBe('validation_failed');
    expect(db.log).toEqual(['count', 'lock', 'count']);
    expect(db.hooks).toHaveLength(MAX_WEBHOOKS_PER_CONNECTION);
  });

  it('refuses an IP literal that is not public, naming it, without a lookup', async () => {
    const { db, lookups, service } = setup();
    expect(await refusal(service.create(owner, { url: 'https://10.1.2.3/in', events: ['conversation.ended'] }))).toEqual({
      code: 'validation_failed',
      message: 'url: must be a public address, and 10.1.2.3 is a private address',
    });
    expect(lookups).toEqual([]);
    await expect(service.create(owner, { url: 'https://203.0.113.9/in', events: ['conversation.ended'] })).resolves.toBeDefined();
    expect(db.hooks).toHaveLength(1);
  });

  it('refuses a name resolving to any address that is not public, without saying the address', async () => {
    const { db, service } = setup({ 'inside.example': ['203.0.113.7', '127.0.0.1'] });
    const err = await refusal(service.create(owner, { url: 'https://inside.example/in', events: ['conversation.ended'] }));
    expect(err).toEqual({ code: 'validation_failed', message: `url: must be a public address, and inside.example resolves to ${NOT_PUBLIC}` });
    expect(err?.message).not.toContain('127.0.0.1');
    expect(db.hooks).toHaveLength(0);
  });

  it('accepts a name that does not resolve now', async () => {
    const { lookups, service } = setup({});
    await expect(service.create(owner, { url: 'https://later.example/in', events: ['conversation.ended'] })).resolves.toMatchObject({
      webhook: { url: 'https://later.example/in' },
    });
    expect(lookups).toEqual(['later.example']);
  });

  it('refuses a url that is not https before any lookup or count', async () => {
    const { db, lookups, service } = setup();
    expect((await refusal(service.create(owner, { url: 'http://hooks.example/in', events: ['conversation.ended'] })))?.message).toMatch(/^url: /);
    expect(lookups).toEqual([]);
    expect(db.log).toEqual([]);
  });
});

describe('WebhooksService.get', () => {
  it("answers not_found for another connection's webhook, a removed one and a malformed id", async () => {
    const { db, service } = setup();
    const mine = db.hook('10');
    const theirs = db.hook('11');
    const removed = db.hook('10', { deleted_at: NOW.toISOString() });
    await expect(service.get('10', mine.id)).resolves.toMatchObject({ id: mine.id, connectionId: '10' });
    for (const id of [theirs.id, removed.id, `0${mine.id}`, 'x']) {
      await expect(service.get('10', id)).rejects.toMatchObject({ code: 'not_found' });
    }
  });
});

describe('WebhooksService.remove', () => {
  it('removes the webhook, wipes its secret and gives up its pending deliveries as webhook_removed', async () => {
    const { db, service } = setup();
    const h = db.hook('10');
    const other = db.hook('10');
    db.deliveries.push(
      { webhookId: h.id, state: 'queued', reason: null },
      { webhookId: h.id, state: 'waiting', reason: null },
      { webhookId: h.id, state: 'delivered', reason: null },
      { webhookId: other.id, state: 'queued', reason: null },
    );
    await service.remove('10', h.id);
    expect(h).toMatchObject({ deleted_at: NOW.toISOString(), secret: '' });
    expect(db.deliveries.map((d) => [d.state, d.reason])).toEqual([
      ['given_up', 'webhook_removed'],
      ['given_up', 'webhook_removed'],
      ['delivered', null],
      ['queued', null],
    ]);
    await expect(service.get('10', h.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it("answers not_found for another connection's webhook, a removed one and a malformed id, giving up nothing", async () => {
    const { db, service } = setup();
    const theirs = db.hook('11');
    const removed = db.hook('10', { deleted_at: NOW.toISOString() });
    db.deliveries.push({ webhookId: theirs.id, state: 'queued', reason: null });
    for (const id of [theirs.id, removed.id, 'x']) {
      await expect(service.remove('10', id)).rejects.toMatchObject({ code: 'not_found' });
    }
    expect(theirs.secret).toBe('whsec_old');
    expect(db.deliveries[0].state).toBe('queued');
  });
});
