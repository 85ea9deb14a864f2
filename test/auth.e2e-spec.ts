import { Clock, hashKey } from '@kernel/core';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { OrganisationsService } from '@features/organisations';
import { DataSource } from 'typeorm';
import { KeyCache, PublicRoutes } from '@web/auth';
import { PubSub } from '@kernel/redis';
import { makeTenant, startApi, TestApi, useApi } from './support/api';
import { ProbeRoutesModule } from './support/probe-routes.module';
import { rawExchange } from './support/raw-tls';

const NO_KEY = 'No API key was sent. Send the key as "Authorization: Bearer <key>".';
const BAD_KEY = 'The API key is malformed or revoked.';
/** Several values of one header: Node sends an array as one header line per value. */
const lines = (values: string[]) => values as unknown as string;

function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  expect(res.headers['x-request-id']).toBeTruthy();
}

describe('key authentication', () => {
  const { api } = useApi({ modules: [ProbeRoutesModule] });

  describe('401 unauthorised', () => {
    it('says that no key was sent when the header is missing', async () => {
      const res = await api.http().get('/v1/me');
      expectError(res, 401, 'unauthorised');
      expect(res.body.error.message).toBe(NO_KEY);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    });

    it.each([
      ['no token', 'Bearer'],
      ['extra parts', `Bearer svc_${'a'.repeat(64)} x`],
      ['uppercase hex', `Bearer svc_${'A'.repeat(64)}`],
      ['too short', `Bearer svc_${'a'.repeat(63)}`],
      ['wrong prefix', `Bearer key_${'a'.repeat(64)}`],
      ['well-formed but unknown', `Bearer svc_${'0'.repeat(64)}`],
    ])('says malformed or revoked for %s', async (_, header) => {
      const res = await api.http().get('/v1/me').set('Authorization', header);
      expectError(res, 401, 'unauthorised');
      expect(res.body.error.message).toBe(BAD_KEY);
    });

    it('keeps the words for a wrong key and adds the form the header must have when the scheme is missing or another; bearer in any case works', async () => {
      const t = await makeTenant(api.app);
      const hint = 'The header must read "Authorization: Bearer <key>"';
      const bare = await api.http().get('/v1/me').set('Authorization', t.key);
      expectError(bare, 401, 'unauthorised');
      expect(bare.body.error.message).toBe(`${BAD_KEY} ${hint}: the scheme "Bearer " is missing before the key.`);
      const basic = await api.http().get('/v1/me').set('Authorization', 'Basic c3ZjOmtleQ==');
      expectError(basic, 401, 'unauthorised');
      expect(basic.body.error.message).toBe(`${BAD_KEY} ${hint}; this one uses the scheme "Basic".`);
      const token = await api.http().get('/v1/me').set('Authorization', `Token ${t.key}`);
      expect(token.body.error.message).toBe(`${BAD_KEY} ${hint}; this one uses the scheme "Token".`);
      for (const scheme of ['bearer', 'BEARER', 'beaRer']) expect((await api.http().get('/v1/me').set('Authorization', `${scheme} ${t.key}`)).status).toBe(200);
      const scim = await api.http().get('/scim/v2/Users').set('Authorization', t.key);
      expect(scim.status).toBe(401);
      expect(scim.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(scim.body).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '401',
        detail: `${BAD_KEY} ${hint}: the scheme "Bearer " is missing before the key.`,
      });
    });

    it('400 invalid_request for more than one Authorization header, whatever their order or keys; SCIM in its schema', async () => {
      const t = await makeTenant(api.app);
      const bad = `Bearer svc_${'0'.repeat(64)}`;
      for (const headers of [
        [t.auth.Authorization, bad],
        [bad, t.auth.Authorization],
        [t.auth.Authorization, t.auth.Authorization],
        [t.auth.Authorization, ''],
      ]) {
        const res = await api.http().get('/v1/me').set('Authorization', lines(headers));
        expectError(res, 400, 'invalid_request');
        expect(res.body.error.message).toBe(
          'More than one Authorization header was sent; send exactly one. The header must read "Authorization: Bearer <key>".',
        );
      }
      // Names in any letter case are the same header.
      const mixed = await rawExchange(
        api.url,
        `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.auth.Authorization}\r\nauthorization: ${bad}\r\nConnection: close\r\n\r\n`,
      );
      expect(mixed.head).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(mixed.body)).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('More than one Authorization header') } });
      const scim = await api
        .http()
        .get('/scim/v2/Users')
        .set('Authorization', lines([t.auth.Authorization, bad]));
      expect(scim.status).toBe(400);
      expect(scim.body).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '400',
        detail: expect.stringContaining('More than one Authorization header'),
      });
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
    });

    it('never reads a key from the query, the body or a cookie', async () => {
      const t = await makeTenant(api.app);
      const q = await api.http().get(`/v1/me?access_token=${t.key}`);
      expectError(q, 401, 'unauthorised');
      expect(q.body.error.message).toBe(NO_KEY);
      const b = await api.http().post('/v1/_probe/things').send({ name: 'x', access_token: t.key });
      expectError(b, 401, 'unauthorised');
      expect(b.body.error.message).toBe(NO_KEY);
      const c = await api.http().get('/v1/me').set('Cookie', `access_token=${t.key}; key=${t.key}`);
      expect(c.body.error.message).toBe(NO_KEY);
    });

    it('answers SCIM paths in the SCIM error schema (RFC 7644 §3.12), also where no route exists', async () => {
      const res = await api.http().get('/scim/v2/NoSuchResource');
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '401',
        detail: NO_KEY,
      });
      const t = await makeTenant(api.app);
      // Express routes paths case-insensitively, so SCIM's error schema follows /SCIM/ too.
      for (const path of ['/scim/v2/NoSuchResource', '/SCIM/v2/NoSuchResource', '/Scim/v2/Users/999999999']) {
        const known = await api.http().get(path).set(t.auth);
        expect(known.status).toBe(404);
        expect(known.headers['content-type']).toMatch(/^application\/scim\+json/);
        expect(known.body).toEqual({
          schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
          status: '404',
          detail: expect.any(String),
        });
      }
    });
  });

  it('reads the paths that need no key from @Public(): the description, the invitation page and the health probes', () => {
    const routes = api.app.get(PublicRoutes);
    expect(routes.match('/v1/openapi.json')).toEqual(expect.objectContaining({ throttled: true }));
    expect(routes.match('/invitations/accept')).toEqual(expect.objectContaining({ throttled: true }));
    expect(routes.match('/health/live')).toEqual(expect.objectContaining({ throttled: false }));
    expect(routes.match('/health/ready/')).toEqual(expect.objectContaining({ throttled: false }));
    for (const keyed of ['/v1/me', '/v1/groups/1', '/scim/v2/Users', '/v1/openapi.json/x', '/health', '/nothing']) {
      expect(routes.match(keyed)).toBeUndefined();
    }
  });

  describe('revocation takes effect on the very next call', () => {
    it('a revoked key stops; the other live key keeps working; a third live key is refused', async () => {
      const t = await makeTenant(api.app);
      const keys = api.app.get(ApiKeysService);
      const second = await keys.create(t.connectionId);
      await expect(keys.create(t.connectionId)).rejects.toMatchObject({ code: 'validation_failed' });
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await keys.revoke(t.keyId);
      const res = await api.http().get('/v1/me').set(t.auth);
      expectError(res, 401, 'unauthorised');
      expect(res.body.error.message).toBe(BAD_KEY);
      expect((await api.http().get('/v1/me').set('Authorization', `Bearer ${second.key}`)).status).toBe(200);
      const third = await keys.create(t.connectionId);
      expect(third.key).toMatch(/^svc_[0-9a-f]{64}$/);
    });

    it('a revoked connection stops every key of it', async () => {
      const t = await makeTenant(api.app);
      const second = await api.app.get(ApiKeysService).create(t.connectionId);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await api.app.get(ConnectionsService).revoke(t.connectionId);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(401);
      expect((await api.http().get('/v1/me').set('Authorization', `Bearer ${second.key}`)).status).toBe(401);
    });
  });

  describe('403 module_off', () => {
    it('answers while the module is off and works again when it is on; keys are not revoked', async () => {
      const t = await makeTenant(api.app);
      const orgs = api.app.get(OrganisationsService);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await orgs.setModule(t.organisationId, false);
      expectError(await api.http().get('/v1/me').set(t.auth), 403, 'module_off');
      await orgs.setModule(t.organisationId, true);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
    });

    it('answers while the policy is withdrawn, and after a new policy version until it is accepted', async () => {
      const t = await makeTenant(api.app);
      const orgs = api.app.get(OrganisationsService);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await orgs.setPolicy(t.organisationId, false);
      expectError(await api.http().get('/v1/me').set(t.auth), 403, 'module_off');
      await orgs.setPolicy(t.organisationId, true);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);

      await orgs.publishPolicyVersion();
      expectError(await api.http().get('/v1/me').set(t.auth), 403, 'module_off');
      await orgs.setPolicy(t.organisationId, true);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      // Other organisations must accept the new version too before the rest of this suite's
      // tenants are made; new organisations accept the current version when created.
    });
  });

  describe('403 scope_missing', () => {
    it('names the missing scope, and a scope change applies from the next call', async () => {
      const t = await makeTenant(api.app, ['users:read']);
      const res = await api.http().get('/v1/_probe/scoped').set(t.auth);
      expectError(res, 403, 'scope_missing');
      expect(res.body.error.message).toContain('cases:read');
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await api.app.get(ConnectionsService).setScopes(t.connectionId, ['users:read', 'cases:read']);
      expect((await api.http().get('/v1/_probe/scoped').set(t.auth)).status).toBe(200);
      await api.app.get(ConnectionsService).setScopes(t.connectionId, []);
      expectError(await api.http().get('/v1/_probe/scoped').set(t.auth), 403, 'scope_missing');
    });
  });

  describe('403 ip_not_allowed', () => {
    it('refuses an address outside the allow-list, and X-Forwarded-For is not believed by default', async () => {
      const t = await makeTenant(api.app);
      const orgs = api.app.get(OrganisationsService);
      await orgs.setAllowlist(t.organisationId, ['203.0.113.0/24', '2001:db8::/32']);
      expectError(await api.http().get('/v1/me').set(t.auth), 403, 'ip_not_allowed');
      expectError(await api.http().get('/v1/me').set(t.auth).set('X-Forwarded-For', '203.0.113.9'), 403, 'ip_not_allowed');
      await orgs.setAllowlist(t.organisationId, ['203.0.113.0/24', '127.0.0.1']);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await orgs.setAllowlist(t.organisationId, []);
      expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
    });

    it('refuses a bad CIDR and changes nothing', async () => {
      const t = await makeTenant(api.app);
      const orgs = api.app.get(OrganisationsService);
      await expect(orgs.setAllowlist(t.organisationId, ['10.0.0.0/33'])).rejects.toMatchObject({ code: 'validation_failed' });
      expect((await orgs.get(t.organisationId)).ipAllowlist).toEqual([]);
    });
  });

  describe('last_used_at', () => {
    it('is written after a call, to the minute', async () => {
      const t = await makeTenant(api.app);
      expect((await api.app.get(ApiKeysService).list(t.connectionId))[0].last_used_at).toBeNull();
      await api.http().get('/v1/me').set(t.auth).expect(200);
      let lastUsed: string | null = null;
      for (let i = 0; i < 50 && !lastUsed; i++) {
        lastUsed = (await api.app.get(ApiKeysService).list(t.connectionId))[0].last_used_at;
        if (!lastUsed) await new Promise((r) => setTimeout(r, 20));
      }
      expect(lastUsed).not.toBeNull();
      expect(Math.abs(Date.parse(lastUsed!) - Date.now())).toBeLessThan(60_000);
    });

    it('stores only the hash and the last four characters of a key', async () => {
      const t = await makeTenant(api.app);
      const rows = await api.app.get(DataSource).query(`SELECT * FROM api_keys WHERE id = $1`, [t.keyId]);
      expect(JSON.stringify(rows)).not.toContain(t.key);
      expect(rows[0].last_four).toBe(t.key.slice(-4));
    });
  });
});

describe('refused-key throttle (addresses from a trusted proxy)', () => {
  let api: TestApi;
  let clock: Clock;
  const bad = { Authorization: `Bearer svc_${'1'.repeat(64)}` };

  beforeAll(async () => {
    api = await startApi({ TRUSTED_PROXIES: '127.0.0.1/32' }, [ProbeRoutesModule]);
    clock = api.app.get(Clock);
  });
  afterAll(() => api.close());
  afterEach(() => jest.restoreAllMocks());

  it('answers 429 after 60 refusals in a minute, to every call from that address only, until the next minute', async () => {
    const t = await makeTenant(api.app);
    // Pin the clock to the start of a minute so that the 61 calls fall in one window.
    const start = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 120_000);
    jest.spyOn(clock, 'now').mockReturnValue(start);
    const from = (ip: string) => ({ 'X-Forwarded-For': ip });

    for (let i = 0; i < 60; i++) {
      const res = await api.http().get('/v1/me').set(bad).set(from('198.51.100.7'));
      expect(res.status).toBe(401);
    }
    const blocked = await api.http().get('/v1/me').set(bad).set(from('198.51.100.7'));
    expectError(blocked, 429, 'rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
    // A valid key from the blocked address waits too; another address is untouched.
    expectError(await api.http().get('/v1/me').set(t.auth).set(from('198.51.100.7')), 429, 'rate_limited');
    expect((await api.http().get('/v1/me').set(t.auth).set(from('198.51.100.8'))).status).toBe(200);
    expect((await api.http().get('/v1/me').set(bad).set(from('198.51.100.8'))).status).toBe(401);

    // The next minute: the address is answered normally again.
    jest.spyOn(clock, 'now').mockReturnValue(new Date(start.getTime() + 60_000));
    expect((await api.http().get('/v1/me').set(t.auth).set(from('198.51.100.7'))).status).toBe(200);
    expect((await api.http().get('/v1/me').set(bad).set(from('198.51.100.7'))).status).toBe(401);
  });

  it('applies to every call from a blocked address (unknown paths, wrong methods, bodies, public paths) but health probes; refusals anywhere count', async () => {
    const start = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 300_000);
    jest.spyOn(clock, 'now').mockReturnValue(start);
    const from = { 'X-Forwarded-For': '198.51.100.21' };
    // Refusals on paths that do not exist, and with no key at all, count like any other.
    for (let i = 0; i < 30; i++) expect((await api.http().get(`/v1/probe-${i}`).set(from)).status).toBe(401);
    for (let i = 0; i < 30; i++) expect((await api.http().delete('/v1/me').set(bad).set(from)).status).toBe(401);
    const t = await makeTenant(api.app);
    const calls = [
      api.http().get('/v1/nothing-here').set(t.auth).set(from),
      api.http().delete('/v1/me').set(t.auth).set(from),
      api.http().post('/v1/_probe/things').set(t.auth).set(from).set('Content-Type', 'application/json').send('{"name":'),
      api.http().get('/v1/openapi.json').set(from),
      api.http().post('/v1/openapi.json').set(from),
      api.http().get('/invitations/accept?token=x').set(from),
    ];
    for (const call of calls) expectError(await call, 429, 'rate_limited');
    const scim = await api.http().get('/scim/v2/Users').set(t.auth).set(from);
    expect(scim.status).toBe(429);
    expect(scim.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '429' });
    // Health probes are not calls of the interface: a load balancer behind the same address keeps probing.
    expect((await api.http().get('/health/live').set(from)).status).toBe(200);
    // Another address is untouched.
    expect((await api.http().get('/v1/openapi.json').set('X-Forwarded-For', '198.51.100.22')).status).toBe(200);
  });

  it('counts a request with more than one Authorization header like a refused key', async () => {
    const start = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 420_000);
    jest.spyOn(clock, 'now').mockReturnValue(start);
    const t = await makeTenant(api.app);
    const from = { 'X-Forwarded-For': '198.51.100.31' };
    for (let i = 0; i < 60; i++)
      expect(
        (
          await api
            .http()
            .get('/v1/me')
            .set('Authorization', lines([t.auth.Authorization, t.auth.Authorization]))
            .set(from)
        ).status,
      ).toBe(400);
    expectError(await api.http().get('/v1/me').set(t.auth).set(from), 429, 'rate_limited');
  });

  it('counts in Redis, so a second replica sees the same block', async () => {
    const start = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 600_000);
    jest.spyOn(clock, 'now').mockReturnValue(start);
    const other = await startApi({ TRUSTED_PROXIES: '127.0.0.1/32' });
    try {
      jest.spyOn(other.app.get(Clock), 'now').mockReturnValue(start);
      const t = await makeTenant(api.app);
      for (let i = 0; i < 30; i++) await api.http().get('/v1/me').set(bad).set('X-Forwarded-For', '192.0.2.44').expect(401);
      for (let i = 0; i < 30; i++) await other.http().get('/v1/me').set(bad).set('X-Forwarded-For', '192.0.2.44').expect(401);
      expectError(await api.http().get('/v1/me').set(t.auth).set('X-Forwarded-For', '192.0.2.44'), 429, 'rate_limited');
      expectError(await other.http().get('/v1/me').set(t.auth).set('X-Forwarded-For', '192.0.2.44'), 429, 'rate_limited');
    } finally {
      await other.close();
    }
  });

  it("a replica that refused the address itself sees another replica's block even before the pub/sub message arrives", async () => {
    const start = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 900_000);
    jest.spyOn(clock, 'now').mockReturnValue(start);
    const other = await startApi({ TRUSTED_PROXIES: '127.0.0.1/32' });
    try {
      jest.spyOn(other.app.get(Clock), 'now').mockReturnValue(start);
      // The block's message from the other replica is lost: only the shared Redis state can tell.
      jest.spyOn(other.app.get(PubSub), 'publish').mockResolvedValue(undefined);
      const t = await makeTenant(api.app);
      const from = { 'X-Forwarded-For': '192.0.2.45' };
      await api.http().get('/v1/me').set(bad).set(from).expect(401);
      for (let i = 0; i < 59; i++) await other.http().get('/v1/me').set(bad).set(from).expect(401);
      expectError(await other.http().get('/v1/me').set(t.auth).set(from), 429, 'rate_limited');
      expectError(await api.http().get('/v1/me').set(t.auth).set(from), 429, 'rate_limited');
      expectError(await api.http().get('/v1/openapi.json').set(from), 429, 'rate_limited');
    } finally {
      await other.close();
    }
  });

  it('believes X-Forwarded-For from a trusted proxy for the allow-list', async () => {
    const t = await makeTenant(api.app);
    await api.app.get(OrganisationsService).setAllowlist(t.organisationId, ['203.0.113.0/24']);
    expect((await api.http().get('/v1/me').set(t.auth).set('X-Forwarded-For', '203.0.113.9')).status).toBe(200);
    expectError(await api.http().get('/v1/me').set(t.auth).set('X-Forwarded-For', '198.51.100.1'), 403, 'ip_not_allowed');
  });
});

describe('cache invalidation across replicas', () => {
  it('a change through a replica drops its own cached entry before the change returns (no wait for Redis)', async () => {
    const a = await startApi();
    try {
      const t = await makeTenant(a.app);
      expect((await a.http().get('/v1/me').set(t.auth)).status).toBe(200);
      const cache = a.app.get(KeyCache);
      expect(cache.get(hashKey(t.key))).toBeDefined();
      await a.app.get(ApiKeysService).revoke(t.keyId);
      expect(cache.get(hashKey(t.key))).toBeUndefined();
    } finally {
      await a.close();
    }
  });

  it('a key revoked through one replica is refused by another on the next call', async () => {
    const a = await startApi();
    const b = await startApi();
    try {
      const t = await makeTenant(a.app);
      expect((await b.http().get('/v1/me').set(t.auth)).status).toBe(200); // cached in b
      expect((await b.http().get('/v1/me').set(t.auth)).status).toBe(200);
      await a.app.get(ApiKeysService).revoke(t.keyId);
      // Publishing happens after commit; delivery to b's subscriber is asynchronous but precedes
      // any request that starts after revoke() returned by far more than a network round trip.
      await new Promise((r) => setTimeout(r, 20));
      expect((await b.http().get('/v1/me').set(t.auth)).status).toBe(401);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
