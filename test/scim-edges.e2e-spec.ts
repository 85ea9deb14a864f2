import { OrganisationsService } from '@features/organisations';
import { PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { request as httpsRequest } from 'node:https';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { makeTenant, useApi } from './support/api';
import { entraUser, expectScimError, oktaUser, patchOp, rand, Res, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';
import { rawExchange } from './support/raw-tls';

const q = encodeURIComponent;

/**
 * Every answer under /scim/v2/ is a SCIM answer (RFC 7644 §3.12 error schema, application/scim+json),
 * whichever layer gives it: Node itself, the front door (key check, body parsing), the router or
 * the SCIM controllers. And the paging corrections of RFC 7644 §3.4.2.4 for integers of any size.
 */
describe('SCIM answers from every layer', () => {
  const { api } = useApi();
  let t: ScimTenant;

  beforeAll(async () => {
    t = await scimTenant(api);
  });

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

  describe('errors answered before the SCIM controllers', () => {
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

  describe('a body over 1 MB', () => {
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

  describe('RFC 7644 edges: /Me, .search, noTarget, Content-Encoding, conditional requests, removing active', () => {
    const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
    const person = (email: string) =>
      api.app.get(DataSource).getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:email)', { email }).getOne();
    const userCount = async (own: ScimTenant) => (await scim(api, own, 'get', '/Users?count=0')).body.totalResults;

    it('/Me answers 501 in the SCIM error schema, whatever the method (RFC 7644 §3.11): any valid key, none without one', async () => {
      const keyOnly = await makeTenant(api.app, []);
      for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
        const res = await scim(api, keyOnly, method, '/Me', method === 'get' || method === 'delete' ? undefined : { schemas: [SCIM.user] });
        expectScimError(res, 501);
        expect(res.body.detail).toContain('/Me');
      }
      expectScimError(await api.http().get('/scim/v2/Me'), 401);
    });

    it('POST /Users/.search and /Groups/.search answer as the GET with the same query does (RFC 7644 §3.4.3)', async () => {
      const own = await scimTenant(api);
      const users = [];
      for (let i = 0; i < 3; i++) users.push((await scim(api, own, 'post', '/Users', oktaUser(`s${i}-${rand()}@${own.domain}`))).body);
      const group = (await scim(api, own, 'post', '/Groups', { schemas: [SCIM.group], displayName: `G ${rand()}`, members: [{ value: users[0].id }] })).body;
      // Another organisation's user of the same name is never found.
      const other = await scimTenant(api);
      await scim(api, other, 'post', '/Users', oktaUser(`s0-${rand()}@${other.domain}`));
      const same = async (resource: string, query: string, body: object) => {
        const get = await scim(api, own, 'get', `/${resource}?${query}`);
        const post = await scim(api, own, 'post', `/${resource}/.search`, { schemas: [SEARCH], ...body });
        expect(get.status).toBe(200);
        expect({ status: post.status, type: post.headers['content-type'], body: post.body }).toEqual({
          status: 200,
          type: expect.stringMatching(/^application\/scim\+json/),
          body: get.body,
        });
        return post.body;
      };
      const page = await same('Users', 'startIndex=2&count=1&attributes=userName,title', { startIndex: 2, count: 1, attributes: ['userName', 'title'] });
      expect(page).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1, Resources: [{ id: users[1].id, userName: users[1].userName }] });
      expect(Object.keys(page.Resources[0]).sort()).toEqual(['id', 'schemas', 'userName']);
      const found = await same('Users', `filter=${q(`userName eq "${users[0].userName}"`)}&excludedAttributes=emails`, {
        filter: `userName eq "${users[0].userName}"`,
        excludedAttributes: ['emails'],
        sortBy: 'userName',
      });
      expect(found.Resources.map((r: { id: string }) => r.id)).toEqual([users[0].id]);
      expect(found.Resources[0].emails).toBeUndefined();
      const groups = await same('Groups', `filter=${q(`displayName eq "${group.displayName}"`)}&excludedAttributes=members`, {
        filter: `displayName eq "${group.displayName}"`,
        excludedAttributes: ['members'],
      });
      expect(groups.Resources).toEqual([expect.objectContaining({ id: group.id, displayName: group.displayName })]);
      expect(groups.Resources[0].members).toBeUndefined();
      expect((await same('Groups', '', {})).Resources[0].members).toEqual([expect.objectContaining({ value: users[0].id })]);
    });

    it('.search: the GET’s scopes, refusals in the SCIM error schema; searching from the root is not served', async () => {
      const groupsOnly = await makeTenant(api.app, ['groups:read']);
      expectScimError(await scim(api, groupsOnly, 'post', '/Users/.search', { schemas: [SEARCH] }), 403);
      expect((await scim(api, groupsOnly, 'post', '/Groups/.search', { schemas: [SEARCH] })).status).toBe(200);
      expectScimError(await scim(api, t, 'post', '/Users/.search', { filter: 'userName eq "a@b.example"' }), 400, 'invalidSyntax');
      expectScimError(await scim(api, t, 'post', '/Users/.search', { schemas: [SEARCH], attributes: [{ a: 1 }] }), 400, 'invalidSyntax');
      expectScimError(await scim(api, t, 'post', '/Users/.search', { schemas: [SEARCH], filter: 'title sw "x"' }), 400, 'invalidFilter');
      expectScimError(await scim(api, t, 'post', '/Groups/.search', { schemas: [SEARCH], count: 1.5 }), 400);
      expectScimError(await scim(api, t, 'post', '/Users/.search', '{"schemas": ['), 400, 'invalidSyntax');
      expectScimError(await scim(api, t, 'post', '/.search', { schemas: [SEARCH] }), 404);
    });

    it('replace through a value filter that matches nothing, of a sub-attribute not kept, answers 400 noTarget and changes nothing (§3.5.2.3)', async () => {
      const created = (await scim(api, t, 'post', '/Users', entraUser(`nt.${rand()}@${t.domain}`))).body;
      const res = await scim(
        api,
        t,
        'patch',
        `/Users/${created.id}`,
        patchOp({ op: 'replace', path: 'title', value: 'Changed' }, { op: 'replace', path: 'emails[type eq "other"].display', value: 'Other' }),
      );
      expectScimError(res, 400, 'noTarget');
      expect(res.body.detail).toContain('emails');
      const after = (await scim(api, t, 'get', `/Users/${created.id}`)).body;
      expect(after).toEqual(created);
      // Entra's own exchanges are unchanged: the same path where it matches, and a filter that makes the element it names.
      const made = await scim(
        api,
        t,
        'patch',
        `/Users/${created.id}`,
        patchOp(
          { op: 'Replace', path: 'emails[type eq "other"].value', value: `o.${rand()}@x.example` },
          { op: 'Replace', path: 'emails[type eq "other"].display', value: 'Other' },
        ),
      );
      expect(made.status).toBe(200);
      expect(made.body.emails).toEqual([created.emails[0], { type: 'other', value: expect.stringMatching(/^o\./) }]);
    });

    it('a body in a Content-Encoding not taken answers 415 (no scimType), never "not valid JSON", and changes nothing; gzip, deflate and br are taken, a bomb is 413', async () => {
      const own = await scimTenant(api);
      const body = (n: string) => JSON.stringify(oktaUser(`${n}-${rand()}@${own.domain}`));
      // The bytes as given (supertest would send a Buffer as JSON of its bytes).
      const post = (path: string, encoding: string, payload: Buffer | string, contentType: string) =>
        new Promise<Res>((resolve, reject) => {
          const data = Buffer.from(payload);
          const headers = { ...own.auth, 'Content-Type': contentType, 'Content-Encoding': encoding, 'Content-Length': String(data.length) };
          const req = httpsRequest(`${api.url}${path}`, { method: 'POST', headers, rejectUnauthorized: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              resolve({ status: res.statusCode ?? 0, text, body: text ? JSON.parse(text) : undefined, headers: res.headers as Record<string, string> });
            });
          });
          req.on('error', reject);
          req.end(data);
        });
      const send = (encoding: string, payload: Buffer | string, contentType = 'application/scim+json') =>
        post('/scim/v2/Users', encoding, payload, contentType);
      for (const encoding of ['compress', 'x-custom', 'zstd', 'gzip, br', 'gzip;q=1']) {
        const res = await send(encoding, gzipSync(body('enc')));
        expectScimError(res, 415);
        expect(res.body.detail).toContain('Content-Encoding');
        expect(res.body.detail).not.toContain('JSON');
      }
      // A JSON body is UTF-8: another charset is not taken either.
      const latin = await send('identity', body('cs'), 'application/scim+json; charset=latin1');
      expectScimError(latin, 415);
      expect(latin.body.detail).toContain('charset');
      // Whether the parser can read the charset (UTF-16) or not (Latin-1), the answer is the same.
      const utf16 = await send('identity', Buffer.from(body('u16'), 'utf16le'), 'application/scim+json; charset=utf-16le');
      expectScimError(utf16, 415);
      expect(utf16.body.detail).toContain('charset');
      expect(await userCount(own)).toBe(0);
      expect((await send('gzip', gzipSync(body('gz')))).status).toBe(201);
      expect((await send('DEFLATE', deflateSync(body('df')))).status).toBe(201);
      expect((await send('br', brotliCompressSync(body('br')))).status).toBe(201);
      expect((await send('identity', body('id'))).status).toBe(201);
      // 20 MB that compress to a few KB: refused once 1 MB is inflated, as any body over the limit.
      const bomb = gzipSync(Buffer.from(`{"schemas":["${SCIM.user}"],"nickName":"${' '.repeat(20 * 1024 * 1024)}"}`));
      expect(bomb.length).toBeLessThan(100_000);
      expectScimError(await send('gzip', bomb), 413);
      expect(await userCount(own)).toBe(4);
      // REST takes the same codings and refuses the others in its envelope (its table's 400).
      const rest = await post('/v1/groups', 'compress', '{}', 'application/json');
      expect(rest.status).toBe(400);
      expect(rest.body).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('Content-Encoding "compress" is not supported') } });
      const restGzip = await post('/v1/groups', 'gzip', gzipSync(JSON.stringify({ name: `gz ${rand()}` })), 'application/json');
      expect(restGzip.status).toBe(201);
    });

    it('If-None-Match: * is not answered 304 while ETags are announced unsupported: the answer comes whole, on SCIM and REST', async () => {
      const created = (await scim(api, t, 'post', '/Users', oktaUser(`inm.${rand()}@${t.domain}`))).body;
      expect((await scim(api, t, 'get', '/ServiceProviderConfig')).body.etag).toEqual({ supported: false });
      for (const path of [`/Users/${created.id}`, '/Users?count=1', '/ServiceProviderConfig', '/Schemas']) {
        const conditions: Array<Record<string, string>> = [{ 'If-None-Match': '*' }, { 'If-None-Match': '*', 'If-Modified-Since': new Date().toUTCString() }];
        for (const headers of conditions) {
          const res = await scim(api, t, 'get', path, undefined, headers);
          expect({ path, status: res.status, etag: res.headers.etag }).toEqual({ path, status: 200, etag: undefined });
          expect(res.body.schemas).toBeDefined();
        }
      }
      const rest = await api.http().get('/v1/me').set(t.auth).set('If-None-Match', '*');
      expect(rest.status).toBe(200);
      expect(rest.body.data).toBeDefined();
    });

    it('removing active (remove, or replace with null) deactivates the user, as false does; true makes it active again', async () => {
      const email = `act.${rand()}@${t.domain}`;
      const { id } = (await scim(api, t, 'post', '/Users', entraUser(email))).body;
      const removed = await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'remove', path: 'active' }));
      expect(removed.status).toBe(200);
      expect(removed.body.active).toBe(false);
      expect((await scim(api, t, 'get', `/Users/${id}`)).body.active).toBe(false);
      expect(await person(email)).toMatchObject({ disabled: true });
      expect((await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: true }))).body.active).toBe(true);
      expect(await person(email)).toMatchObject({ disabled: false });
      expect((await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'Replace', value: { active: null } }))).body.active).toBe(false);
      expect(await person(email)).toMatchObject({ disabled: true });
      // A PATCH that does not touch active leaves it as it is.
      expect((await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: 'Nurse' }))).body.active).toBe(false);
    });
  });

  describe('paging integers of any length', () => {
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
