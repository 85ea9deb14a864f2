import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { ProbeRoutesModule } from './support/probe-routes.module';
import { expectScimError, oktaUser, patchOp, rand, scim, scimTenant, ScimTenant } from './support/scim-client';

/**
 * Text that is not well-formed Unicode is refused before anything is stored, on every JSON body
 * (REST and SCIM), never answered 500 and never changed: a lone UTF-16 surrogate (JSON's
 * `"\ud800"` escape) is 422 naming the field; bytes that are not UTF-8 are 400 (the body itself
 * is not a JSON text).
 */
describe('text that is not well-formed Unicode', () => {
  const { api, t } = useApi({ modules: [ProbeRoutesModule], tenant: true });
  const db = () => api.app.get(DataSource);
  const count = async (sql: string, params: unknown[] = []) => (await db().query(sql, params))[0].n as number;
  // Sent as the bytes given: superagent would otherwise serialise a Buffer as JSON.
  const rawJson = (path: string, body: string | Buffer, type = 'application/json', auth = t.auth) =>
    api
      .http()
      .post(path)
      .set(auth)
      .set('Content-Type', type)
      .serialize((b: unknown) => b as string)
      .send(body as string);

  describe('REST', () => {
    it('422 validation_failed naming the field for a lone surrogate, in a value or a field name; nothing is created', async () => {
      const before = await count('SELECT count(*)::int AS n FROM organisations');
      for (const unit of ['\\ud800', '\\udfff', '\\uDBFF']) {
        const res = await rawJson('/v1/_probe/things', `{"name":"a${unit}b"}`);
        expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 422, code: 'validation_failed' });
        expect(res.body.error.message).toMatch(/^name: must be well-formed Unicode text; it holds a lone surrogate \(U\+D[89A-F][0-9A-F]{2}\) at character 2$/);
      }
      const inName = await rawJson('/v1/_probe/things', '{"name":"x","k\\ud800":1}');
      expect({ status: inName.status, code: inName.body.error?.code }).toEqual({ status: 422, code: 'validation_failed' });
      expect(inName.body.error.message).toBe('"k\\ud800": a field name must be well-formed Unicode text; it holds a lone surrogate (U+D800) at character 2');
      expect(await count('SELECT count(*)::int AS n FROM organisations')).toBe(before);
      // A well-formed pair (an emoji, sent escaped or as UTF-8) is ordinary text.
      expect((await rawJson('/v1/_probe/things', '{"name":"a\\ud83d\\ude00"}')).status).toBe(201);
      expect((await api.http().post('/v1/_probe/things').set(t.auth).send({ name: 'a😀' })).status).toBe(201);
    });

    it('two external_ref values differing only in a lone surrogate never name one case: both are refused', async () => {
      const ref = `r-${rand()}`;
      for (const unit of ['\\ud800', '\\udfff']) {
        const res = await rawJson('/v1/cases', `{"external_ref":"${ref}${unit}"}`);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 422,
          body: { error: { code: 'validation_failed', message: expect.stringMatching(/^external_ref: must be well-formed Unicode text/) } },
        });
      }
      expect(await count(`SELECT count(*)::int AS n FROM cases WHERE organisation_id = $1 AND external_ref LIKE $2`, [t.organisationId, `${ref}%`])).toBe(0);
    });

    it('400 invalid_request for bytes that are not UTF-8, or a charset other than UTF-8; nothing is created', async () => {
      const before = await count('SELECT count(*)::int AS n FROM organisations');
      const bodies = [
        Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('b"}')]),
        // UTF-8's encoding of a surrogate (CESU-8), an overlong "/", and a cut sequence.
        Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
        Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
        Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]),
      ];
      for (const body of bodies) {
        const res = await rawJson('/v1/_probe/things', body);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 400,
          body: { error: { code: 'invalid_request', message: 'The body is not well-formed UTF-8; JSON bodies must be sent in UTF-8.' } },
        });
      }
      const utf16 = await rawJson('/v1/_probe/things', Buffer.from('{"name":"ab"}', 'utf16le'), 'application/json; charset=utf-16le');
      expect({ status: utf16.status, code: utf16.body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
      expect(utf16.body.error.message).toContain('UTF-8');
      expect(await count('SELECT count(*)::int AS n FROM organisations')).toBe(before);
      // UTF-8 (with or without the charset named) is taken.
      const ok = await rawJson('/v1/_probe/things', Buffer.from('{"name":"Zoë"}'), 'application/json; charset=UTF-8');
      expect({ status: ok.status, name: ok.body.data?.name }).toEqual({ status: 201, name: 'Zoë' });
    });

    it('a query or path parameter carrying a lone surrogate or bytes that are not UTF-8 is refused, never stored or answered 500', async () => {
      for (const cursor of ['%ED%A0%80', '%FF', 'a%EDb']) {
        const res = await api.http().get(`/v1/cases?cursor=${cursor}`).set(t.auth);
        expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
      }
      // Path parameters are ids or permission codes, checked against their form or the catalogue.
      for (const path of ['/v1/cases/%ED%A0%80', '/v1/groups/1/permissions/%ED%A0%80', '/v1/groups/1/permissions/a%FF']) {
        const res = await api.http().get(path).set(t.auth);
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
      }
      const del = await api.http().delete('/v1/groups/1/permissions/%ED%A0%80').set(t.auth);
      expect({ status: del.status < 500, code: del.body.error?.code }).toEqual({ status: true, code: expect.any(String) });
    });
  });

  describe('SCIM', () => {
    let st: ScimTenant;
    beforeAll(async () => {
      st = await scimTenant(api);
    });

    const lone = (body: unknown) => JSON.stringify(body).replaceAll('LONE', '\\ud800');

    it.each([
      ['displayName', (u: Record<string, unknown>) => ({ ...u, displayName: 'aLONEb' }), 'displayName'],
      ['nickName', (u: Record<string, unknown>) => ({ ...u, nickName: 'aLONEb' }), 'nickName'],
      ['name.givenName', (u: Record<string, unknown>) => ({ ...u, name: { givenName: 'aLONEb', familyName: 'F' } }), 'name.givenName'],
      ['title', (u: Record<string, unknown>) => ({ ...u, title: 'aLONEb' }), 'title'],
    ])('POST /Users with a lone surrogate in %s: 422 invalidValue naming it, no user', async (_, make, path) => {
      const email = `u.${rand()}@${st.domain}`;
      const res = await scim(api, st, 'post', '/Users', lone(make(oktaUser(email))));
      expectScimError(res, 422, 'invalidValue');
      expect(res.body.detail).toMatch(new RegExp(`^${path.replace('.', '\\.')}: must be well-formed Unicode text`));
      const found = await scim(api, st, 'get', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`);
      expect(found.body.totalResults).toBe(0);
    });

    it('PATCH and PUT with a lone surrogate: 422 invalidValue, and the stored value is unchanged', async () => {
      const email = `p.${rand()}@${st.domain}`;
      const created = await scim(api, st, 'post', '/Users', { ...oktaUser(email), title: 'Interpreter' });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const patched = await scim(api, st, 'patch', `/Users/${id}`, lone(patchOp({ op: 'replace', path: 'title', value: 'aLONEb' })));
      expectScimError(patched, 422, 'invalidValue');
      expect(patched.body.detail).toMatch(/^Operations\[0\]\.value: must be well-formed Unicode text/);
      const put = await scim(api, st, 'put', `/Users/${id}`, lone({ ...oktaUser(email), title: 'aLONEb' }));
      expectScimError(put, 422, 'invalidValue');
      expect((await scim(api, st, 'get', `/Users/${id}`)).body.title).toBe('Interpreter');
    });

    it('a filter carrying a lone surrogate or bytes that are not UTF-8 only looks up (nothing matches), never 500', async () => {
      for (const filter of [encodeURIComponent('displayName eq "a\\ud800"'), `displayName%20eq%20%22a%ED%A0%80%22`, `displayName%20eq%20%22a%FF%22`]) {
        const res = await scim(api, st, 'get', `/Users?filter=${filter}`);
        expect(res.status).toBeLessThan(500);
        if (res.status === 200) expect(res.body.totalResults).toBe(0);
      }
    });

    it('bytes that are not UTF-8: 400 invalidSyntax', async () => {
      const [head, tail] = JSON.stringify({ ...oktaUser(`b.${rand()}@${st.domain}`), displayName: 'a#b' }).split('#');
      const body = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
      const res = await rawJson('/scim/v2/Users', body, 'application/scim+json', st.auth);
      expectScimError(res, 400, 'invalidSyntax');
      expect(res.body.detail).toContain('UTF-8');
    });
  });
});
