import { useApi } from './support/api';
import { expectScimError, oktaUser, patchOp, rand, scim, scimTenant, ScimTenant } from './support/scim-client';

type Res = { status: number; body: any; headers: Record<string, string> };

/**
 * Field names that are JavaScript object properties (`__proto__`, `constructor`, `toString`…) are
 * refused like any unknown field, at any depth, on every JSON body and in list queries: JSON.parse
 * makes an own `__proto__`, which whitelisting does not see, and such names must never reach code
 * that indexes objects by field name.
 */
describe('Field names that are JavaScript object properties', () => {
  const { api, t } = useApi({ tenant: true });
  let s: ScimTenant;

  beforeAll(async () => {
    s = await scimTenant(api);
  });

  /** A raw JSON text: an object literal with `__proto__` would set the prototype, not send the field. */
  const post = (path: string, json: string, method: 'post' | 'patch' = 'post'): Promise<Res> =>
    api.http()[method](path).set(t.auth).set('Content-Type', 'application/json').send(json) as unknown as Promise<Res>;
  const expect422 = (res: Res, field: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 422, code: 'validation_failed' });
    expect(res.body.error.message).toContain(`${field}: is not a known field`);
  };
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf', '__defineGetter__'];

  it.each(NAMES)('POST /v1/groups with a top-level %s answers 422 naming it, and creates nothing', async (name) => {
    const groupName = `p-${rand()}`;
    expect422(await post('/v1/groups', `{"name":"${groupName}","permissions":[],"${name}":{"x":1}}`), name);
    const list = await api.http().get('/v1/groups?limit=100').set(t.auth);
    expect(list.body.data.map((g: { name: string }) => g.name)).not.toContain(groupName);
  });

  it('refuses them on PATCH too, and as a scalar value', async () => {
    expect422(await post('/v1/groups', `{"name":"p-${rand()}","permissions":[],"constructor":"x"}`), 'constructor');
    const group = await api
      .http()
      .post('/v1/groups')
      .set(t.auth)
      .send({ name: `g-${rand()}`, permissions: [] });
    expect(group.status).toBe(201);
    expect422(await post(`/v1/groups/${group.body.data.id}`, `{"name":"x-${rand()}","__proto__":{"isAdmin":true}}`, 'patch'), '__proto__');
  });

  it('refuses them on users, webhooks and cases', async () => {
    expect422(await post('/v1/users', `{"email":"a-${rand()}@example.org","__proto__":{"x":1}}`), '__proto__');
    expect422(await post('/v1/webhooks', `{"url":"https://hooks.example.com/x","events":["conversation.ended"],"toString":"x"}`), 'toString');
    expect422(await post('/v1/cases', `{"external_ref":"r-${rand()}","valueOf":1}`), 'valueOf');
    expect422(await post('/v1/cases', `{"external_ref":"r-${rand()}","hasOwnProperty":{"a":[{"prototype":1}]}}`), 'hasOwnProperty');
  });

  it('SCIM Users POST and PATCH (also inside a value object): 400 invalidSyntax in the SCIM error schema, nothing changes', async () => {
    const email = `u.${rand()}@${s.domain}`;
    const body = JSON.stringify(oktaUser(email)).replace(/^\{/, '{"__proto__":{"active":false},');
    const created = await scim(api, s, 'post', '/Users', body);
    expectScimError(created, 400, 'invalidSyntax');
    expect(created.body.detail).toContain('__proto__');
    const list = await scim(api, s, 'get', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`);
    expect(list.body.totalResults).toBe(0);

    const ok = await scim(api, s, 'post', '/Users', oktaUser(email));
    expect(ok.status).toBe(201);
    const id = ok.body.id as string;
    const inValue = JSON.stringify(patchOp({ op: 'replace', value: { title: 'Boss' } })).replace('{"title"', '{"constructor":{"name":"x"},"title"');
    const patched = await scim(api, s, 'patch', `/Users/${id}`, inValue);
    expectScimError(patched, 400, 'invalidSyntax');
    expect(patched.body.detail).toContain('Operations[0].value.constructor');
    const nested = JSON.stringify(patchOp({ op: 'add', path: 'name', value: { givenName: 'Q' } })).replace('{"givenName"', '{"__proto__":{},"givenName"');
    expectScimError(await scim(api, s, 'patch', `/Users/${id}`, nested), 400, 'invalidSyntax');
    const after = await scim(api, s, 'get', `/Users/${id}`);
    expect(after.body.title).toBeUndefined();
    expect(after.body.name.givenName).toBe('Test');
  });

  it.each(['__proto__', 'constructor', 'hasOwnProperty', 'toString'])('a list query parameter %s answers 400 naming it, as ?foo=1 does', async (name) => {
    const foo = await api.http().get('/v1/groups?foo=1').set(t.auth);
    expect({ status: foo.status, code: foo.body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
    for (const path of ['/v1/groups', '/v1/users', '/v1/webhooks', '/v1/cases']) {
      const res = await api.http().get(`${path}?${name}=1`).set(t.auth);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 400, code: 'invalid_request' });
      expect(res.body.error.message).toContain(name);
    }
  });
});
