import { makeTenant, useApi } from './support/api';
import { entraUser, expectScimError, rand, scim, SCIM, scimTenant } from './support/scim-client';
import { resourceTypeProblems, schemaProblems, serviceProviderConfigProblems } from './support/scim-rfc7643';

const SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';

describe('SCIM discovery and the common answers', () => {
  const { api } = useApi({ env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
  const base = () => `${api.config.publicBaseUrl}/scim/v2`;

  describe('discovery (any valid key, no scope needed)', () => {
    it('ServiceProviderConfig says what is really supported', async () => {
      const t = await makeTenant(api.app, []);
      const res = await scim(api, t, 'get', '/ServiceProviderConfig');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(res.body).toEqual({
        schemas: [SPC],
        documentationUri: `${api.config.publicBaseUrl}/v1/openapi.json`,
        patch: { supported: true },
        bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
        filter: { supported: true, maxResults: 1000 },
        changePassword: { supported: false },
        sort: { supported: false },
        etag: { supported: false },
        authenticationSchemes: [
          expect.objectContaining({ type: 'oauthbearertoken', primary: true, name: expect.any(String), description: expect.any(String) }),
        ],
        meta: { resourceType: 'ServiceProviderConfig', location: `${base()}/ServiceProviderConfig` },
      });
    });

    it('the claims hold: count is capped at maxResults, and bulk is not there', async () => {
      const t = await scimTenant(api);
      const res = await scim(api, t, 'get', '/Users?count=5000');
      expect(res.status).toBe(200);
      expect(res.body.itemsPerPage).toBeLessThanOrEqual(1000);
      expectScimError(await scim(api, t, 'post', '/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] }), 404);
    });

    it('ResourceTypes: User (with the enterprise extension) and Group', async () => {
      const t = await makeTenant(api.app, []);
      const res = await scim(api, t, 'get', '/ResourceTypes');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ schemas: [SCIM.list], totalResults: 2, startIndex: 1, itemsPerPage: 2 });
      expect(res.body.Resources).toEqual([
        expect.objectContaining({
          id: 'User',
          name: 'User',
          endpoint: '/Users',
          schema: SCIM.user,
          schemaExtensions: [{ schema: SCIM.enterprise, required: false }],
          meta: { resourceType: 'ResourceType', location: `${base()}/ResourceTypes/User` },
        }),
        expect.objectContaining({ id: 'Group', name: 'Group', endpoint: '/Groups', schema: SCIM.group }),
      ]);
      expect((await scim(api, t, 'get', '/ResourceTypes/Group')).body.id).toBe('Group');
      expectScimError(await scim(api, t, 'get', '/ResourceTypes/Device'), 404);
    });

    it('Schemas: User, Group and the enterprise extension, each attribute with mutability and uniqueness', async () => {
      const t = await makeTenant(api.app, []);
      const res = await scim(api, t, 'get', '/Schemas');
      expect(res.body).toMatchObject({ schemas: [SCIM.list], totalResults: 3 });
      const byId = Object.fromEntries(res.body.Resources.map((s: { id: string }) => [s.id, s]));
      expect(Object.keys(byId)).toEqual([SCIM.user, SCIM.group, SCIM.enterprise]);
      const attr = (schema: string, name: string) => byId[schema].attributes.find((a: { name: string }) => a.name === name);
      expect(attr(SCIM.user, 'userName')).toMatchObject({ type: 'string', required: true, caseExact: false, mutability: 'immutable', uniqueness: 'global' });
      expect(attr(SCIM.user, 'groups')).toMatchObject({ mutability: 'readOnly', multiValued: true });
      expect(attr(SCIM.user, 'externalId')).toMatchObject({ caseExact: true, uniqueness: 'server' });
      expect(attr(SCIM.group, 'displayName')).toMatchObject({ required: true, uniqueness: 'server' });
      expect(attr(SCIM.enterprise, 'manager').subAttributes.map((s: { name: string }) => s.name)).toEqual(['value', '$ref']);
      for (const s of res.body.Resources) {
        for (const a of s.attributes)
          expect(Object.keys(a)).toEqual(
            expect.arrayContaining(['name', 'type', 'multiValued', 'description', 'required', 'caseExact', 'mutability', 'returned', 'uniqueness']),
          );
      }
      const one = await scim(api, t, 'get', `/Schemas/${SCIM.enterprise}`);
      expect(one.body).toMatchObject({ id: SCIM.enterprise, meta: { resourceType: 'Schema', location: `${base()}/Schemas/${SCIM.enterprise}` } });
    });

    it('describes exactly the attributes a user and a group carry (nothing promised that is not kept)', async () => {
      const t = await scimTenant(api);
      // Every attribute the schema promises, written (a user carries only what was written to it).
      const base = entraUser(`s.${rand()}@${t.domain}`);
      const list = [{ value: 'v', type: 'work' }];
      const everything = {
        ...base,
        nickName: 'n',
        profileUrl: 'https://p.example/s',
        userType: 'Employee',
        locale: 'en-US',
        timezone: 'Europe/Amsterdam',
        ims: list,
        photos: [{ value: 'https://p.example/s.png', type: 'photo' }],
        entitlements: list,
        roles: list,
        [SCIM.enterprise]: { ...(base[SCIM.enterprise] as object), costCenter: 'c', organization: 'o', division: 'd' },
      };
      const user = (await scim(api, t, 'post', '/Users', everything)).body;
      const manager = (await scim(api, t, 'post', '/Users', entraUser(`b.${rand()}@${t.domain}`))).body;
      await scim(api, t, 'patch', `/Users/${user.id}`, {
        schemas: [SCIM.list.replace('ListResponse', 'PatchOp')],
        Operations: [{ op: 'add', path: `${SCIM.enterprise}:manager`, value: manager.id }],
      });
      const full = (await scim(api, t, 'get', `/Users/${user.id}`)).body;
      const group = (
        await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: `S ${rand()}`, externalId: 'x', members: [{ value: user.id }] })
      ).body;
      const schemas = Object.fromEntries(
        (await scim(api, t, 'get', '/Schemas')).body.Resources.map((s: { id: string; attributes: Array<{ name: string }> }) => [
          s.id,
          s.attributes.map((a) => a.name).sort(),
        ]),
      );
      const carried = (o: object) =>
        Object.keys(o)
          .filter((k) => !['schemas', 'id', 'meta', SCIM.enterprise].includes(k))
          .sort();
      expect(carried(full)).toEqual(schemas[SCIM.user]);
      expect(Object.keys(full[SCIM.enterprise]).sort()).toEqual(schemas[SCIM.enterprise]);
      expect(carried(group)).toEqual(schemas[SCIM.group]);
    });
  });

  describe('RFC 7643 §5, §6 and §7: the discovery answers conform', () => {
    /** Everything discovery answers, each resource also read by its own URL. */
    const discovery = async () => {
      const t = await makeTenant(api.app, []);
      const get = async (path: string) => {
        const res = await scim(api, t, 'get', path);
        expect({ path, status: res.status, type: res.headers['content-type'] }).toEqual({
          path,
          status: 200,
          type: expect.stringMatching(/^application\/scim\+json/),
        });
        return res.body;
      };
      const types = await get('/ResourceTypes');
      const schemas = await get('/Schemas');
      for (const list of [types, schemas]) {
        expect(list).toEqual({
          schemas: [SCIM.list],
          totalResults: list.Resources.length,
          startIndex: 1,
          itemsPerPage: list.Resources.length,
          Resources: expect.any(Array),
        });
      }
      for (const r of types.Resources) expect(await get(`/ResourceTypes/${r.id}`)).toEqual(r);
      for (const s of schemas.Resources) expect(await get(`/Schemas/${s.id}`)).toEqual(s);
      return { config: await get('/ServiceProviderConfig'), types: types.Resources, schemas: schemas.Resources };
    };
    const problems = (d: Awaited<ReturnType<typeof discovery>>) => {
      const resourceTypes = d.types.map((r: { name: string }) => r.name);
      const schemaIds = d.schemas.map((s: { id: string }) => s.id);
      return [
        ...serviceProviderConfigProblems(d.config, { base: base() }),
        ...d.types.flatMap((r: unknown) => resourceTypeProblems(r, { base: base(), schemaIds })),
        ...d.schemas.flatMap((s: unknown) => schemaProblems(s, { base: base(), resourceTypes })),
      ];
    };

    it('every attribute has the characteristics §7 lists, types from its list, referenceTypes on every reference, well-formed sub-attributes', async () => {
      const d = await discovery();
      expect(problems(d)).toEqual([]);
      // Every resource type's schemas are described, and every schema belongs to a resource type.
      const used = d.types.flatMap((r: { schema: string; schemaExtensions?: Array<{ schema: string }> }) => [
        r.schema,
        ...(r.schemaExtensions ?? []).map((e) => e.schema),
      ]);
      expect(d.schemas.map((s: { id: string }) => s.id).sort()).toEqual([...new Set(used)].sort());
      // The references RFC 7643 §8.7.1 declares as external URLs.
      const user = d.schemas.find((s: { id: string }) => s.id === SCIM.user);
      const attr = (name: string) => user.attributes.find((a: { name: string }) => a.name === name);
      expect(attr('profileUrl')).toMatchObject({ type: 'reference', referenceTypes: ['external'] });
      expect(attr('photos').subAttributes.find((a: { name: string }) => a.name === 'value')).toMatchObject({ type: 'reference', referenceTypes: ['external'] });
    });

    it('the check finds what it is for: a reference without referenceTypes, a type off the list or the RFC, a complex without sub-attributes', async () => {
      const d = await discovery();
      const broken = structuredClone(d);
      const user = broken.schemas.find((s: { id: string }) => s.id === SCIM.user);
      const attr = (name: string) => user.attributes.find((a: { name: string }) => a.name === name);
      delete attr('photos').subAttributes.find((a: { name: string }) => a.name === 'value').referenceTypes;
      attr('profileUrl').type = 'string';
      delete attr('profileUrl').referenceTypes;
      attr('title').type = 'text';
      delete attr('name').subAttributes;
      delete attr('emails').mutability;
      attr('emails').maxLength = 254;
      broken.config.filter = { supported: 'yes' };
      broken.types[0].schemaExtensions = [{ schema: 'urn:nowhere' }];
      expect(problems(broken)).toEqual([
        'ServiceProviderConfig: filter.supported must be a boolean',
        'ServiceProviderConfig: filter.maxResults must be a non-negative integer',
        'resource type User schemaExtensions[0]: schema must be the URI of a schema the service describes',
        'resource type User schemaExtensions[0]: required must be a boolean',
        expect.stringContaining('(name): a complex attribute must carry subAttributes'),
        expect.stringContaining('(title): type "text" is not one of RFC 7643\'s types'),
        expect.stringContaining('(title): RFC 7643 defines it as string, not text'),
        expect.stringContaining('(emails): "mutability" is missing'),
        expect.stringContaining('(emails): "maxLength" is not a characteristic RFC 7643 defines here'),
        expect.stringContaining('(profileUrl): RFC 7643 defines it as reference, not string'),
        expect.stringContaining('(photos.value): a reference must carry referenceTypes'),
      ]);
    });
  });

  it('the OpenAPI description documentationUri points at describes SCIM: its own tag, SCIM media types, its error schema', async () => {
    const doc = (await api.http().get('/v1/openapi.json')).body;
    const scim = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(([p]) => p.startsWith('/scim/v2/'));
    expect(scim.map(([p]) => p)).toEqual(expect.arrayContaining(['/scim/v2/Users', '/scim/v2/Groups/{id}', '/scim/v2/ServiceProviderConfig']));
    for (const [, item] of scim) {
      for (const op of Object.values(item)) {
        expect(op.tags).toEqual(['SCIM']);
        for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
          if (r.content) expect({ status, types: Object.keys(r.content) }).toEqual({ status, types: ['application/scim+json'] });
        }
      }
    }
    expect(doc.paths['/v1/users']).toBeDefined();
  });

  describe("401, 403, 404, 405 and 429 on SCIM paths: the REST statuses in RFC 7644's error schema", () => {
    it('401 without a key or with a bad one, with WWW-Authenticate', async () => {
      const none = await api.http().get('/scim/v2/Users');
      expectScimError(none as never, 401);
      expect(none.headers['www-authenticate']).toBe('Bearer realm="integrations"');
      expectScimError(
        (await api
          .http()
          .get('/scim/v2/ServiceProviderConfig')
          .set('Authorization', `Bearer svc_${'0'.repeat(64)}`)) as never,
        401,
      );
    });

    it('403 when the connection lacks the scope', async () => {
      const t = await makeTenant(api.app, ['groups:read']);
      const res = await scim(api, t, 'get', '/Users');
      expectScimError(res, 403);
      expect(res.body.detail).toContain('users:read');
      expectScimError(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: 'x' }), 403);
    });

    it('404 for an unknown SCIM path; 405 with Allow for a known path and a wrong method', async () => {
      const t = await makeTenant(api.app);
      expectScimError(await scim(api, t, 'get', '/Devices'), 404);
      const wrong = await scim(api, t, 'delete', '/ServiceProviderConfig');
      expectScimError(wrong, 405);
      expect(wrong.headers.allow).toBe('GET, HEAD');
      const onItem = await scim(api, t, 'post', '/Users/12', {});
      expectScimError(onItem, 405);
      expect(onItem.headers.allow).toBe('DELETE, GET, HEAD, PATCH, PUT');
    });

    it('429 with Retry-After once an address had 60 refused calls in the minute', async () => {
      const t = await makeTenant(api.app);
      const from = { 'X-Forwarded-For': `198.51.100.${10 + Math.floor(Math.random() * 200)}` };
      const bad = { Authorization: `Bearer svc_${'f'.repeat(64)}` };
      let last;
      for (let i = 0; i < 61; i++) last = await api.http().get('/scim/v2/Users').set(bad).set(from);
      const blocked = await scim(api, t, 'get', '/Users', undefined, from);
      expectScimError(blocked, 429);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect(last!.status).toBe(429);
    });
  });
});
