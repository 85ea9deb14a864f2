import { OrganisationsService } from '@features/organisations';
import { TestApi } from './support/api';
import { expectScimError, oktaUser, rand, Res, scim, SCIM, scimTenant, ScimTenant, startScimApi } from './support/scim-client';
import { rawExchange } from './support/raw-tls';

const q = encodeURIComponent;

/**
 * Every answer under /scim/v2/ is a SCIM answer (RFC 7644 §3.12 error schema, application/scim+json),
 * whichever layer gives it: Node itself, the front door (key check, body parsing), the router or
 * the SCIM controllers. And the paging corrections of RFC 7644 §3.4.2.4 for integers of any size.
 */
describe('SCIM answers from every layer', () => {
  let api: TestApi;
  let t: ScimTenant;

  beforeAll(async () => {
    api = await startScimApi();
    t = await scimTenant(api);
  });
  afterAll(() => api.close());

  const raw = (text: string) => rawExchange(api.url, text);
  const expectRawScim = (r: { head: string; body: string }, status: number) => {
    expect(r.head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(r.head).toMatch(/\r\ncontent-type: application\/scim\+json/i);
    expect(r.head).toMatch(/\r\nx-request-id: \S+/i);
    expect(JSON.parse(r.body)).toEqual({ schemas: [SCIM.error], status: String(status), detail: expect.any(String) });
  };
  const expectRawRest = (r: { head: string; body: string }, status: number) => {
    expect(r.head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(JSON.parse(r.body)).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
  };

  describe('item 11: errors answered before the SCIM controllers', () => {
    it('headers over 16 KB (a 17,000-character filter): 400 in the SCIM schema, /SCIM/ too; REST keeps its envelope', async () => {
      const filter = q(`userName eq "${'a'.repeat(17_000)}@x.example"`);
      for (const base of ['/scim/v2', '/SCIM/v2', '/Scim/V2']) {
        const res = await api.http().get(`${base}/Users?filter=${filter}`).set(t.auth);
        expectScimError(res, 400);
        expect(res.body.detail).toContain('16 KB');
        expect(res.headers['x-request-id']).toBeDefined();
      }
      // Sent without a key, the same: the size is refused before the key is looked at.
      expectScimError(await api.http().get(`/scim/v2/Users?filter=${filter}`), 400);
      const rest = await api
        .http()
        .get(`/v1/people?cursor=${'a'.repeat(17_000)}`)
        .set(t.auth);
      expect(rest.status).toBe(400);
      expect(rest.body).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('16 KB') } });
      // Headers made long by a header rather than the path.
      expectScimError(await api.http().get('/scim/v2/Users').set(t.auth).set('X-Padding', 'p'.repeat(17_000)), 400);
      // Up to Node's own limit (64 KB) the front door answers; beyond it Node cuts the head off
      // before the path is known (a 400 either way, the connection closed, the server unharmed).
      expectScimError(
        await api
          .http()
          .get(`/scim/v2/Users?filter=${'b'.repeat(60_000)}`)
          .set(t.auth),
        400,
      );
      const huge = await api
        .http()
        .get(`/scim/v2/Users?filter=${'c'.repeat(70_000)}`)
        .set(t.auth);
      expect(huge.status).toBe(400);
      expect((await scim(api, t, 'get', '/ServiceProviderConfig')).status).toBe(200);
    });

    it('an unknown Expect, a request without Host and malformed HTTP: 400 in the SCIM schema under /scim/v2/', async () => {
      expectRawScim(await raw(`GET /scim/v2/Users HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nAuthorization: Bearer ${t.key}\r\n\r\n`), 400);
      expectRawScim(await raw(`GET /scim/v2/Users HTTP/1.1\r\nAuthorization: Bearer ${t.key}\r\nConnection: close\r\n\r\n`), 400);
      expectRawScim(await raw(`GET /scim/v2/Users HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n`), 400);
      expectRawRest(await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nAuthorization: Bearer ${t.key}\r\n\r\n`), 400);
      expectRawRest(await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n`), 400);
      expectRawScim(await raw('CONNECT /scim/v2/Users HTTP/1.1\r\nHost: x\r\n\r\n'), 405);
    });

    it('the key check: 401 without a key or with a wrong one, 403 ip_not_allowed and module_off', async () => {
      expectScimError(await api.http().get('/scim/v2/Users'), 401);
      expectScimError(await api.http().get('/SCIM/v2/Users').set('Authorization', 'Bearer svc_nope'), 401);
      expectScimError(await api.http().post('/scim/v2/Users').set('Content-Type', 'application/scim+json').send('{not json'), 401);
      const own = await scimTenant(api);
      const orgs = api.app.get(OrganisationsService);
      await orgs.setAllowlist(own.organisationId, ['203.0.113.0/24']);
      expectScimError(await scim(api, own, 'get', '/Users'), 403);
      await orgs.setAllowlist(own.organisationId, []);
      await orgs.setModule(own.organisationId, false);
      expectScimError(await scim(api, own, 'get', '/ServiceProviderConfig'), 403);
      await orgs.setModule(own.organisationId, true);
      expect((await scim(api, own, 'get', '/Users')).status).toBe(200);
    });

    it('body parsing: not JSON, a wrong Content-Type, a NUL character, too deep: SCIM errors', async () => {
      expectScimError(await scim(api, t, 'post', '/Users', '{"schemas": ['), 400, 'invalidSyntax');
      const form = await api.http().post('/scim/v2/Users').set(t.auth).set('Content-Type', 'text/plain').send('x');
      expectScimError(form, 400);
      expectScimError(await scim(api, t, 'post', '/Users', { ...oktaUser(`n-${rand()}@${t.domain}`), nickName: 'a\u0000b' }), 422, 'invalidValue');
      let deep: unknown = 'x';
      for (let i = 0; i < 40; i++) deep = { a: deep };
      expectScimError(await scim(api, t, 'post', '/Users', deep), 400, 'invalidSyntax');
    });

    it('the router: 404 for an unknown path and 405 for a wrong method, in any case of /scim/', async () => {
      expectScimError(await scim(api, t, 'get', '/Nope'), 404);
      expectScimError(await api.http().get('/SCIM/v2/Nope').set(t.auth), 404);
      const wrong = await api.http().delete('/Scim/v2/Users').set(t.auth);
      expectScimError(wrong, 405);
      expect(wrong.headers.allow).toContain('GET');
      expectScimError(await api.http().get('/scim/v2/Users/abc').set(t.auth), 404);
    });
  });

  describe('item 12: a body over 1 MB', () => {
    it('answers 413 with the SCIM error body (no scimType), on POST, PUT and PATCH; REST keeps 400', async () => {
      const big = JSON.stringify({ schemas: [SCIM.user], userName: `big@${t.domain}`, nickName: 'n'.repeat(1_100_000) });
      for (const method of ['post', 'put', 'patch'] as const) {
        const res: Res = await scim(api, t, method, method === 'post' ? '/Users' : '/Users/1', big);
        expectScimError(res, 413);
        expect(res.body.detail).toContain('1mb');
      }
      const rest = await api
        .http()
        .post('/v1/groups')
        .set(t.auth)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ name: 'x'.repeat(1_100_000) }));
      expect(rest.status).toBe(400);
      expect(rest.body.error.code).toBe('invalid_request');
    });
  });

  describe('item 15: paging integers of any length', () => {
    it('caps count and startIndex of 10 digits and more; a startIndex past the end is an empty page with the right totalResults', async () => {
      const own = await scimTenant(api);
      for (let i = 0; i < 2; i++) expect((await scim(api, own, 'post', '/Users', oktaUser(`p${i}-${rand()}@${own.domain}`))).status).toBe(201);
      const all = await scim(api, own, 'get', '/Users?count=9999999999');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ totalResults: 2, startIndex: 1, itemsPerPage: 2 });
      for (const startIndex of ['1000000000', '99999999999', '123456789012345678901234567890']) {
        const far = await scim(api, own, 'get', `/Users?startIndex=${startIndex}&count=99999999999999999999`);
        expect(far.status).toBe(200);
        expect(far.body).toEqual({
          schemas: [SCIM.list],
          totalResults: 2,
          startIndex: Math.min(Number(startIndex), 2_147_483_647),
          itemsPerPage: 0,
          Resources: [],
        });
      }
      const groups = await scim(api, own, 'get', '/Groups?startIndex=10000000000&count=10000000000');
      expect(groups.status).toBe(200);
      expect(groups.body).toMatchObject({ totalResults: 0, startIndex: 2_147_483_647, itemsPerPage: 0 });
      expect((await scim(api, own, 'get', '/Users?startIndex=-99999999999')).body).toMatchObject({ startIndex: 1, itemsPerPage: 2 });
      for (const bad of ['1.5', '1e10', 'ten']) expectScimError(await scim(api, own, 'get', `/Users?count=${bad}`), 400);
    });
  });
});
