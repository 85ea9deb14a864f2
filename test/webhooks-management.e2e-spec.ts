import { Scope, SCOPES } from '@kernel/core';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { makeTenant, startApi, TestApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';
import { Method, Res, webhookKit } from './support/webhook-kit';
import { RECEIVER_DOMAIN } from './support/webhook-receiver';

const ALL_EVENTS = ['conversation.ended', 'summary.ready', 'document.translated', 'user.joined'];

describe('Webhooks: management calls', () => {
  let api: TestApi;
  let db: DataSource;
  let checker: OpenApiChecker;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    api = await startApi({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' });
    db = api.app.get(DataSource);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  const { call, expectError, hookUrl, create, resolveAs } = webhookKit(
    () => api,
    () => checker,
  );

  it('documents every webhook call in a valid OpenAPI 3.1 description', async () => {
    const doc = (await api.http().get('/v1/openapi.json')).body;
    const file = join(mkdtempSync(join(tmpdir(), 'oas-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, file]);
    expect(JSON.parse(stdout)).toMatchObject({ valid: true });
    const ops = [
      ['/v1/webhooks', 'get', 'listWebhooks'],
      ['/v1/webhooks', 'post', 'createWebhook'],
      ['/v1/webhooks/{id}', 'get', 'getWebhook'],
      ['/v1/webhooks/{id}', 'delete', 'deleteWebhook'],
      ['/v1/webhooks/{id}/test', 'post', 'testWebhook'],
    ];
    for (const [path, method, operationId] of ops) {
      const op = doc.paths[path][method];
      expect({ operationId: op.operationId, summary: Boolean(op.summary), description: Boolean(op.description) }).toEqual({
        operationId,
        summary: true,
        description: true,
      });
    }
    expect(doc.paths['/v1/webhooks'].post.parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
    expect(Object.keys(doc.paths['/v1/webhooks/{id}/test'].post.responses)).toEqual(expect.arrayContaining(['200', '409', '422', '429']));
    expect(doc.components.schemas.CreatedWebhookDto.required).toEqual(
      expect.arrayContaining(['id', 'url', 'events', 'secret', 'created_at', 'switched_off_at']),
    );
  });

  describe('POST /v1/webhooks', () => {
    it('201 with the webhook and its secret, shown this once: reads and lists never carry it', async () => {
      const t = await makeTenant(api.app);
      const url = hookUrl();
      const res = await call(t, 'post', '/v1/webhooks', { url, events: ['summary.ready', 'conversation.ended'] }, `k-${rand()}`);
      expect(res.status).toBe(201);
      checker.check('POST', '/v1/webhooks', 201, res.body);
      expect(res.headers['x-request-id']).toBeTruthy();
      const w = res.body.data;
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(/^\d+$/),
          url,
          events: ['summary.ready', 'conversation.ended'],
          secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          switched_off_at: null,
        },
      });
      const other = await create(t);
      expect(other.secret).not.toBe(w.secret);

      const one = await call(t, 'get', `/v1/webhooks/${w.id}`);
      expect(one.status).toBe(200);
      checker.check('GET', '/v1/webhooks/{id}', 200, one.body);
      expect(one.body).toEqual({ data: { id: w.id, url, events: w.events, created_at: w.created_at, switched_off_at: null } });
      const list = await call(t, 'get', '/v1/webhooks');
      checker.check('GET', '/v1/webhooks', 200, list.body);
      expect(list.text).not.toContain(w.secret);
      expect(list.text).not.toContain('"secret"');
      expect(one.text).not.toContain(w.secret);
    });

    it('a replay with the same Idempotency-Key answers the same webhook with secret null and secret_shown false', async () => {
      const t = await makeTenant(api.app);
      const key = `k-${rand()}`;
      const body = { url: hookUrl(), events: ['user.joined'] };
      const first = await call(t, 'post', '/v1/webhooks', body, key);
      expect(first.status).toBe(201);
      const again = await call(t, 'post', '/v1/webhooks', body, key);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      checker.check('POST', '/v1/webhooks', 201, again.body);
      expect(again.body).toEqual({ data: { ...first.body.data, secret: null, secret_shown: false } });
      // The secret is shown once: the stored answer used for replays never holds it.
      const stored = await db.query(`SELECT response_body FROM idempotency_keys WHERE connection_id = $1`, [t.connectionId]);
      expect(JSON.stringify(stored)).not.toContain(first.body.data.secret);
      const list = await call(t, 'get', '/v1/webhooks');
      expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([first.body.data.id]);
      const reused = await call(t, 'post', '/v1/webhooks', { ...body, events: ['summary.ready'] }, key);
      expectError(reused, 422, 'idempotency_key_reused', 'POST', '/v1/webhooks');
    });

    it.each([
      ['http://hooks.example.com/x', 'must use https'],
      ['https://hooks.example.com:8443/x', 'port 443'],
      ['https://127.0.0.1:444/x', 'port 443'],
      ['https://user:pw@hooks.example.com/x', 'user name or password'],
      ['https://user@hooks.example.com/x', 'user name or password'],
      ['https://localhost/x', 'localhost'],
      ['https://api.localhost/x', 'localhost'],
      ['https://127.0.0.2/x', 'loopback'],
      ['https://2130706434/x', 'loopback'],
      ['https://[::1]/x', 'loopback'],
      ['https://10.1.2.3/x', 'private'],
      ['https://172.16.0.1/x', 'private'],
      ['https://192.168.1.10/x', 'private'],
      ['https://169.254.169.254/latest', 'link-local'],
      ['https://[fe80::1]/x', 'link-local'],
      ['https://100.64.0.1/x', 'CGNAT'],
      ['https://[fc00::1]/x', 'unique-local'],
      ['https://[fd12:3456::1]/x', 'unique-local'],
      ['https://224.0.0.1/x', 'multicast'],
      ['https://[ff02::1]/x', 'multicast'],
      ['https://240.0.0.1/x', 'reserved'],
      ['https://192.0.2.1/x', 'documentation'],
      ['https://198.51.100.1/x', 'documentation'],
      ['https://203.0.113.1/x', 'documentation'],
      ['https://[2001:db8::1]/x', 'documentation'],
      ['https://0.0.0.0/x', 'unspecified'],
      ['https://[::]/x', 'unspecified'],
      ['https://[::ffff:10.0.0.1]/x', 'private'],
      ['https://[::ffff:127.0.0.2]/x', 'loopback'],
      ['https://[64:ff9b::a00:1]/x', 'private'],
      ['https://[64:ff9b::7f00:2]/x', 'loopback'],
      ['https://[2002:a00:1::1]/x', 'private'],
      ['https://[2002:c0a8:101::1]/x', 'private'],
      ['https://[::7f00:2]/x', 'loopback'],
      ['https://[::a00:1]/x', 'private'],
      ['not a url', 'absolute https URL'],
      ['https:///hooks.example.com/x', 'absolute https URL'],
      ['https:hooks.example.com/x', 'absolute https URL'],
      ['https://@hooks.example.com/x', 'absolute https URL'],
      ['https://hooks.example.com/a b', 'spaces'],
      [' https://hooks.example.com/x', 'spaces'],
      ['https://hooks.example.com\\x', 'backslash'],
      ['', 'blank'],
      ['https://hooks.example.com/a"b', 'must not contain " (write it percent-encoded: %22)'],
      ['https://hooks.example.com/<script>', 'must not contain < (write it percent-encoded: %3C)'],
      ['https://hooks.example.com/x?q=a>b', 'must not contain > (write it percent-encoded: %3E)'],
      ['https://hooks.example.com/{id}', 'must not contain {'],
      ['https://hooks.example.com/a\u0007b', 'control characters'],
    ])('refuses the url %s with 422 validation_failed naming url (%s)', async (url, why) => {
      const t = await makeTenant(api.app);
      const res = await call(t, 'post', '/v1/webhooks', { url, events: ['conversation.ended'] });
      expectError(res, 422, 'validation_failed', 'POST', '/v1/webhooks');
      expect(res.body.error.message).toMatch(/^url: /);
      expect(res.body.error.message).toContain(why);
      expect((await call(t, 'get', '/v1/webhooks')).body.data).toEqual([]);
    });

    it('refuses a name that resolves to any address that is not public', async () => {
      const t = await makeTenant(api.app);
      resolveAs({
        [`private.${RECEIVER_DOMAIN}`]: ['10.9.8.7'],
        [`mixed.${RECEIVER_DOMAIN}`]: ['93.184.216.34', '192.168.7.7'],
        [`v6.${RECEIVER_DOMAIN}`]: ['::1'],
      });
      for (const [host, why] of [
        [`private.${RECEIVER_DOMAIN}`, '10.9.8.7'],
        [`mixed.${RECEIVER_DOMAIN}`, '192.168.7.7'],
        [`v6.${RECEIVER_DOMAIN}`, '::1'],
      ]) {
        const res = await call(t, 'post', '/v1/webhooks', { url: `https://${host}/hook`, events: ['conversation.ended'] });
        expectError(res, 422, 'validation_failed', 'POST', '/v1/webhooks');
        // Not how the name resolves: a key holder must not learn internal addresses through refusals.
        expect(res.body.error.message).toBe(`url: must be a public address, and ${host} resolves to an address that is not public`);
        expect(res.body.error.message).not.toContain(why);
      }
    });

    it('accepts a public IP literal, a name resolving to public addresses, a name that does not resolve yet, and an allowed private CIDR', async () => {
      const t = await makeTenant(api.app);
      resolveAs({ [`public.${RECEIVER_DOMAIN}`]: ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
      for (const url of [
        'https://8.8.8.8/hook',
        'https://[2606:4700:4700::1111]/hook',
        `https://public.${RECEIVER_DOMAIN}/hook`,
        'https://no-such-name.invalid/hook',
        'https://127.0.0.1/hook',
        'https://hooks.example.com:443/x?y=1',
        'https://hooks.example.com/a%22b%3Cc%3E?q=%7Bx%7D',
      ]) {
        const res = await call(t, 'post', '/v1/webhooks', { url, events: ['conversation.ended'] });
        expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 201, body: expect.anything() });
        expect(res.body.data.url).toBe(url);
      }
    });

    it.each([
      [{ events: ['conversation.started'] }, 'events: "conversation.started" is not an event'],
      [{ events: ['webhook.test'] }, 'events: "webhook.test" cannot be subscribed to'],
      [{ events: [] }, 'events: must list at least one event'],
      [{ events: 'conversation.ended' }, 'events: '],
      [{ events: [5] }, 'events: '],
      [{ events: undefined }, 'events: '],
      [{ url: undefined }, 'url: '],
      [{ url: 42 }, 'url: '],
      [{ colour: 'blue' }, 'colour'],
    ])('refuses %j with 422 validation_failed', async (patch, message) => {
      const t = await makeTenant(api.app);
      const res = await call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: ['conversation.ended'], ...patch });
      expectError(res, 422, 'validation_failed', 'POST', '/v1/webhooks');
      expect(res.body.error.message).toContain(message);
    });

    it.each([
      ['conversation.ended', 'conversations:read'],
      ['summary.ready', 'summaries:read'],
      ['document.translated', 'documents:read'],
      ['user.joined', 'users:read'],
    ])('refuses %s when the connection lacks %s, naming the scope', async (event, scope) => {
      const t = await makeTenant(api.app, SCOPES.filter((s) => s !== scope) as Scope[]);
      const res = await call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: [event] });
      expectError(res, 422, 'validation_failed', 'POST', '/v1/webhooks');
      expect(res.body.error.message).toBe(`events: "${event}" needs the scope ${scope}, which the connection does not hold`);
      const ok = await call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: ALL_EVENTS.filter((e) => e !== event) });
      expect(ok.status).toBe(201);
    });

    it('a connection holds at most 10 webhooks: the eleventh answers 422; removing one makes room', async () => {
      const t = await makeTenant(api.app);
      const made = await Promise.all(Array.from({ length: 10 }, () => create(t)));
      const eleventh = await call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: ['conversation.ended'] });
      expectError(eleventh, 422, 'validation_failed', 'POST', '/v1/webhooks');
      expect(eleventh.body.error.message).toContain('already holds 10 webhooks');
      // Another connection of the same organisation has its own ten.
      const sibling = await makeTenant(api.app);
      expect((await call(sibling, 'post', '/v1/webhooks', { url: hookUrl(), events: ['conversation.ended'] })).status).toBe(201);
      expect((await call(t, 'delete', `/v1/webhooks/${made[3].id}`)).status).toBe(204);
      expect((await call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: ['conversation.ended'] })).status).toBe(201);
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhooks WHERE connection_id = $1 AND deleted_at IS NULL`, [t.connectionId]);
      expect(n).toBe(10);
    });

    it('never lets concurrent creations pass the limit', async () => {
      const t = await makeTenant(api.app);
      const answers = await Promise.all(Array.from({ length: 14 }, () => call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: ['summary.ready'] })));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
      expect(answers.filter((r) => r.status === 422)).toHaveLength(4);
    });

    it('every webhook call needs webhooks:manage', async () => {
      const owner = await makeTenant(api.app);
      const w = await create(owner);
      const t = await makeTenant(api.app, SCOPES.filter((s) => s !== 'webhooks:manage') as Scope[]);
      for (const [method, path, template] of [
        ['get', '/v1/webhooks', '/v1/webhooks'],
        ['post', '/v1/webhooks', '/v1/webhooks'],
        ['get', `/v1/webhooks/${w.id}`, '/v1/webhooks/{id}'],
        ['delete', `/v1/webhooks/${w.id}`, '/v1/webhooks/{id}'],
        ['post', `/v1/webhooks/${w.id}/test`, '/v1/webhooks/{id}/test'],
      ] as Array<[Method, string, string]>) {
        const res = await call(t, method, path, method === 'post' && path === '/v1/webhooks' ? { url: hookUrl(), events: ['summary.ready'] } : undefined);
        expectError(res, 403, 'scope_missing', method.toUpperCase(), template);
        expect(res.body.error.message).toContain('webhooks:manage');
      }
    });
  });

  describe('GET /v1/webhooks and /v1/webhooks/{id}', () => {
    it("lists the connection's own webhooks newest first, by cursor", async () => {
      const t = await makeTenant(api.app);
      const sibling = await makeTenant(api.app);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await create(t)).id);
      await create(sibling);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Res = await call(t, 'get', `/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        checker.check('GET', '/v1/webhooks', 200, page.body);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.data.map((w: { id: string }) => w.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([...made].reverse());
      expectError(await call(t, 'get', '/v1/webhooks?cursor=nope'), 400, 'invalid_request', 'GET', '/v1/webhooks');
      expectError(await call(t, 'get', '/v1/webhooks?limit=0'), 400, 'invalid_request', 'GET', '/v1/webhooks');
    });

    it("another connection's webhook, a removed one and a malformed id answer 404", async () => {
      const t = await makeTenant(api.app);
      const other = await makeTenant(api.app);
      const theirs = await create(other);
      expectError(await call(t, 'get', `/v1/webhooks/${theirs.id}`), 404, 'not_found', 'GET', '/v1/webhooks/{id}');
      expectError(await call(t, 'delete', `/v1/webhooks/${theirs.id}`), 404, 'not_found', 'DELETE', '/v1/webhooks/{id}');
      expectError(await call(t, 'post', `/v1/webhooks/${theirs.id}/test`), 404, 'not_found', 'POST', '/v1/webhooks/{id}/test');
      expectError(await call(t, 'get', '/v1/webhooks/abc'), 404, 'not_found', 'GET', '/v1/webhooks/{id}');
      expect((await call(other, 'get', `/v1/webhooks/${theirs.id}`)).status).toBe(200);
    });
  });

  describe('DELETE /v1/webhooks/{id}', () => {
    it('204 with no body; the webhook is gone, its secret wiped, and its queued deliveries given up with that reason', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      const seed = async (state: string) => {
        const id = randomBytes(16).toString('hex');
        const finished = state === 'delivered';
        await db.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, attempts, next_attempt_at, finished_at)
           VALUES ($1, $2, $3, $4, 'conversation.ended', now(), '{"conversation_id":"x"}', $5, $6, $7, $8)`,
          [
            id,
            w.id,
            t.organisationId,
            t.connectionId,
            state,
            state === 'queued' ? 0 : 1,
            finished ? null : new Date(Date.now() + 3_600_000),
            finished ? new Date() : null,
          ],
        );
        return id;
      };
      const queued = await seed('queued');
      const waiting = await seed('waiting');
      const delivered = await seed('delivered');
      const res = await call(t, 'delete', `/v1/webhooks/${w.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectError(await call(t, 'get', `/v1/webhooks/${w.id}`), 404, 'not_found', 'GET', '/v1/webhooks/{id}');
      expectError(await call(t, 'delete', `/v1/webhooks/${w.id}`), 404, 'not_found', 'DELETE', '/v1/webhooks/{id}');
      expect((await call(t, 'get', '/v1/webhooks')).body.data).toEqual([]);
      const states = await db.query(`SELECT id, state, give_up_reason FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`, [w.id]);
      expect(Object.fromEntries(states.map((r: any) => [r.id, [r.state, r.give_up_reason]]))).toEqual({
        [queued]: ['given_up', 'webhook_removed'],
        [waiting]: ['given_up', 'webhook_removed'],
        [delivered]: ['delivered', null],
      });
      const [{ secret }] = await db.query(`SELECT secret FROM webhooks WHERE id = $1`, [w.id]);
      expect(secret).toBe('');
    });
  });
});
