import { InvitationsService, PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { expectScimError, oktaUser, patchOp, rand, Res, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';

const q = encodeURIComponent;
const MS_GROUP_SCHEMA = 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group';

describe('SCIM Groups', () => {
  const { api, mail } = useApi({ mail: true });
  let db: DataSource;
  beforeAll(() => {
    db = api.app.get(DataSource);
  });

  const ok = (res: Res, status = 200) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
    return res.body;
  };
  const user = async (t: ScimTenant, domain = t.domain) =>
    ok(await scim(api, t, 'post', '/Users', oktaUser(`m.${rand()}@${domain}`)), 201) as { id: string; userName: string };
  const group = async (t: ScimTenant, name = `Group ${rand()}`, extra: object = {}) =>
    ok(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name, members: [], ...extra }), 201) as { id: string; displayName: string };
  const memberIds = async (t: ScimTenant, id: string) =>
    ((await scim(api, t, 'get', `/Groups/${id}`)).body.members ?? []).map((m: { value: string }) => m.value);
  const groupOf = async (email: string) =>
    (await db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:email)', { email }).getOne())?.groupId ?? null;

  describe('Okta group push', () => {
    it('looks up by displayName, creates with members: [] (no permissions), renames with {id, displayName}, 409 on a taken name', async () => {
      const t = await scimTenant(api);
      const name = `Nurses ${rand()}`;
      expect((await scim(api, t, 'get', `/Groups?filter=${q(`displayName eq "${name}"`)}&startIndex=1&count=100`)).body).toEqual({
        schemas: [SCIM.list],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });
      const created = await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name, members: [] });
      expect(created.status).toBe(201);
      expect(created.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(created.headers.location).toBe(`${api.config.publicBaseUrl}/scim/v2/Groups/${created.body.id}`);
      expect(created.body).toEqual({
        schemas: [SCIM.group],
        id: expect.stringMatching(/^\d+$/),
        displayName: name,
        members: [],
        meta: { resourceType: 'Group', created: expect.any(String), lastModified: expect.any(String), location: created.headers.location },
      });
      const rest = await api.http().get(`/v1/groups/${created.body.id}`).set(t.auth);
      expect(rest.body.data).toMatchObject({ name, permissions: [] });

      expectScimError(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name.toUpperCase(), members: [] }), 409, 'uniqueness');
      const found = await scim(api, t, 'get', `/Groups?filter=${q(`displayName eq "${name.toLowerCase()}"`)}&startIndex=1&count=100`);
      expect(found.body).toMatchObject({ totalResults: 1, Resources: [{ id: created.body.id, displayName: name }] });

      const renamed = await scim(
        api,
        t,
        'patch',
        `/Groups/${created.body.id}`,
        patchOp({ op: 'replace', value: { id: created.body.id, displayName: `${name} NL` } }),
      );
      expect(renamed.status).toBe(200);
      expect(renamed.body.displayName).toBe(`${name} NL`);
      const other = await group(t);
      expectScimError(
        await scim(api, t, 'patch', `/Groups/${other.id}`, patchOp({ op: 'replace', value: { id: other.id, displayName: `${name} nl` } })),
        409,
        'uniqueness',
      );
    });

    it('membership: add with members values, remove with members[value eq "…"], replace of the whole list', async () => {
      const t = await scimTenant(api);
      const [a, b, c] = [await user(t), await user(t), await user(t)];
      const g = await group(t);
      const added = await scim(
        api,
        t,
        'patch',
        `/Groups/${g.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: a.id, display: 'A' }, { value: b.id }] }),
      );
      expect(added.status).toBe(200);
      expect(added.body.members).toEqual([
        { value: a.id, $ref: `${api.config.publicBaseUrl}/scim/v2/Users/${a.id}`, display: 'Test User', type: 'User' },
        { value: b.id, $ref: `${api.config.publicBaseUrl}/scim/v2/Users/${b.id}`, display: 'Test User', type: 'User' },
      ]);
      expect(await groupOf(a.userName)).toBe(g.id);
      expect((await scim(api, t, 'get', `/Users/${a.id}`)).body.groups).toEqual([
        { value: g.id, $ref: `${api.config.publicBaseUrl}/scim/v2/Groups/${g.id}`, display: g.displayName, type: 'direct' },
      ]);

      ok(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'remove', path: `members[value eq "${a.id}"]` })));
      expect(await memberIds(t, g.id)).toEqual([b.id]);
      expect(await groupOf(a.userName)).toBeNull();

      ok(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'replace', path: 'members', value: [{ value: c.id }] })));
      expect(await memberIds(t, g.id)).toEqual([c.id]);
      expect(await groupOf(b.userName)).toBeNull();
      // Removing someone who is not a member changes nothing.
      ok(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'remove', path: `members[value eq "${a.id}"]` })));
      expect(await memberIds(t, g.id)).toEqual([c.id]);
    });

    it('a person is in at most one group: the group that claimed them first keeps them, another takes them when it lets go', async () => {
      const t = await scimTenant(api);
      const u = await user(t);
      const [g1, g2] = [await group(t), await group(t)];
      ok(await scim(api, t, 'patch', `/Groups/${g1.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: u.id }] })));
      ok(await scim(api, t, 'patch', `/Groups/${g2.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: u.id }] })));
      // No move while g1 claims them (see test/scim-membership.e2e-spec.ts).
      expect(await memberIds(t, g1.id)).toEqual([u.id]);
      expect(await memberIds(t, g2.id)).toEqual([]);
      ok(await scim(api, t, 'patch', `/Groups/${g1.id}`, patchOp({ op: 'remove', path: `members[value eq "${u.id}"]` })));
      expect(await memberIds(t, g1.id)).toEqual([]);
      expect(await memberIds(t, g2.id)).toEqual([u.id]);
    });

    it('unlinking may DELETE the group: members keep their accounts and stay in the organisation', async () => {
      const t = await scimTenant(api);
      const u = await user(t);
      const g = await group(t, `G ${rand()}`, { members: [{ value: u.id }] });
      expect(await memberIds(t, g.id)).toEqual([u.id]);
      expect((await scim(api, t, 'delete', `/Groups/${g.id}`)).status).toBe(204);
      expectScimError(await scim(api, t, 'get', `/Groups/${g.id}`), 404);
      expect((await scim(api, t, 'get', `/Users/${u.id}`)).body).toMatchObject({ active: true, groups: [] });
    });
  });

  it('refuses more than 1000 members in one request (422 invalidValue) at once, and changes nothing', async () => {
    const t = await scimTenant(api);
    const many = Array.from({ length: 1001 }, (_, i) => ({ value: String(i + 1) }));
    const name = `Big ${rand()}`;
    const res = await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name, members: many });
    expectScimError(res, 422, 'invalidValue');
    expect(res.body.detail).toContain('members: at most 1000');
    const listed = await scim(api, t, 'get', `/Groups?filter=${encodeURIComponent(`displayName eq "${name}"`)}`);
    expect(listed.body.totalResults).toBe(0);
  });

  describe('Entra ID', () => {
    it('creates with an extra Microsoft schema URI and externalId; reads with excludedAttributes=members', async () => {
      const t = await scimTenant(api);
      const name = `Entra ${rand()}`;
      const created = await scim(api, t, 'post', '/Groups', {
        schemas: [SCIM.group, MS_GROUP_SCHEMA],
        externalId: 'aad-object-1',
        displayName: name,
        members: [],
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ externalId: 'aad-object-1', displayName: name });
      const listed = await scim(api, t, 'get', `/Groups?excludedAttributes=members&filter=${q(`displayName eq "${name}"`)}`);
      expect(listed.body.Resources).toHaveLength(1);
      expect(listed.body.Resources[0].members).toBeUndefined();
      expect(listed.body.Resources[0]).toMatchObject({ id: created.body.id, externalId: 'aad-object-1', meta: { resourceType: 'Group' } });
      const one = await scim(api, t, 'get', `/Groups/${created.body.id}?excludedAttributes=members`);
      expect(one.body.members).toBeUndefined();
      expect((await scim(api, t, 'get', `/Groups?filter=${q('externalId eq "aad-object-1"')}`)).body.totalResults).toBe(1);
      expectScimError(
        await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group, MS_GROUP_SCHEMA], externalId: 'aad-object-1', displayName: `${name} 2` }),
        409,
        'uniqueness',
      );
    });

    it('adds members with "$ref": null, removes with {path: "members", value: [{value}]} (only those), renames with Replace', async () => {
      const t = await scimTenant(api);
      const [a, b, c] = [await user(t), await user(t), await user(t)];
      const g = await group(t);
      ok(
        await scim(
          api,
          t,
          'patch',
          `/Groups/${g.id}`,
          patchOp({
            op: 'Add',
            path: 'members',
            value: [
              { $ref: null, value: a.id },
              { $ref: null, value: b.id },
              { $ref: null, value: c.id },
            ],
          }),
        ),
      );
      expect(await memberIds(t, g.id)).toEqual([a.id, b.id, c.id]);
      const removed = await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'Remove', path: 'members', value: [{ value: b.id }] }));
      expect(removed.status).toBe(200);
      expect(await memberIds(t, g.id)).toEqual([a.id, c.id]);
      const renamed = await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'Replace', path: 'displayName', value: `Renamed ${rand()}` }));
      expect(renamed.body.displayName).toMatch(/^Renamed /);
      expect(await memberIds(t, g.id)).toEqual([a.id, c.id]);
    });
  });

  describe('all or nothing', () => {
    it('a PATCH failing half-way (an unknown member after a rename and a valid add) changes nothing', async () => {
      const t = await scimTenant(api);
      const [a, b] = [await user(t), await user(t)];
      const g = await group(t, `Before ${rand()}`, { members: [{ value: a.id }] });
      const before = (await scim(api, t, 'get', `/Groups/${g.id}`)).body;
      const res = await scim(
        api,
        t,
        'patch',
        `/Groups/${g.id}`,
        patchOp(
          { op: 'replace', path: 'displayName', value: 'After' },
          { op: 'remove', path: `members[value eq "${a.id}"]` },
          { op: 'add', path: 'members', value: [{ value: b.id }] },
          { op: 'add', path: 'members', value: [{ value: '999999999' }] },
        ),
      );
      expectScimError(res, 422, 'invalidValue');
      expect((await scim(api, t, 'get', `/Groups/${g.id}`)).body).toEqual(before);
      expect(await groupOf(a.userName)).toBe(g.id);
      expect(await groupOf(b.userName)).toBeNull();
    });

    it('a PATCH whose last step is refused by the database rules (last_people_manager) rolls the earlier steps back', async () => {
      const t = await scimTenant(api);
      const [a, b] = [await user(t), await user(t)];
      const g = await group(t, `Managers ${rand()}`);
      await db.query(`UPDATE groups SET permissions = '{people.manage}' WHERE id = $1`, [g.id]);
      ok(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: a.id }] })));
      const res = await scim(
        api,
        t,
        'patch',
        `/Groups/${g.id}`,
        patchOp({ op: 'replace', path: 'displayName', value: `Renamed ${rand()}` }, { op: 'replace', path: 'members', value: [] }),
      );
      expectScimError(res, 409);
      const after = (await scim(api, t, 'get', `/Groups/${g.id}`)).body;
      expect(after.displayName).toBe(g.displayName);
      expect(after.members.map((m: { value: string }) => m.value)).toEqual([a.id]);
      expect(await groupOf(b.userName)).toBeNull();
    });

    it('a rename to a taken name after a member add changes nothing (409 uniqueness)', async () => {
      const t = await scimTenant(api);
      const a = await user(t);
      const taken = await group(t);
      const g = await group(t);
      expectScimError(
        await scim(
          api,
          t,
          'patch',
          `/Groups/${g.id}`,
          patchOp({ op: 'add', path: 'members', value: [{ value: a.id }] }, { op: 'replace', path: 'displayName', value: taken.displayName }),
        ),
        409,
        'uniqueness',
      );
      expect(await memberIds(t, g.id)).toEqual([]);
    });
  });

  describe('scopes and permissions', () => {
    it('setting members also needs users:write: 403 without it, nothing changed; a group with no members can still be made and renamed', async () => {
      const full = await scimTenant(api);
      const u = await user(full);
      const t = { ...full, ...(await scimTenantWithKey(full.organisationId, ['groups:read', 'groups:write'])) };
      const name = `NoUsers ${rand()}`;
      expectScimError(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name, members: [{ value: u.id }] }), 403);
      expect((await scim(api, t, 'get', `/Groups?filter=${q(`displayName eq "${name}"`)}`)).body.totalResults).toBe(0);
      const g = ok(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name, members: [] }), 201);
      ok(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'replace', path: 'displayName', value: `${name} 2` })));
      const refused = await scim(
        api,
        t,
        'patch',
        `/Groups/${g.id}`,
        patchOp({ op: 'replace', path: 'displayName', value: `${name} 3` }, { op: 'add', path: 'members', value: [{ value: u.id }] }),
      );
      expectScimError(refused, 403);
      expect(refused.body.detail).toContain('users:write');
      expect((await scim(api, t, 'get', `/Groups/${g.id}`)).body).toMatchObject({ displayName: `${name} 2`, members: [] });
      expectScimError(await scim(api, t, 'get', '/Users'), 403);
    });

    it("names cross resources only with that resource's read scope: members' names need users:read, a user's group name groups:read", async () => {
      const full = await scimTenant(api);
      const u = await user(full);
      const g = await group(full, `Named ${rand()}`, { members: [{ value: u.id }] });
      const groupsOnly = { ...full, ...(await scimTenantWithKey(full.organisationId, ['groups:read'])) };
      const usersOnly = { ...full, ...(await scimTenantWithKey(full.organisationId, ['users:read'])) };
      expect((await scim(api, groupsOnly, 'get', `/Groups/${g.id}`)).body.members).toEqual([{ value: u.id, $ref: expect.any(String), type: 'User' }]);
      expect((await scim(api, usersOnly, 'get', `/Users/${u.id}`)).body.groups).toEqual([{ value: g.id, $ref: expect.any(String), type: 'direct' }]);
      expect((await scim(api, full, 'get', `/Users/${u.id}`)).body.groups[0].display).toBe(g.displayName);
    });

    it('moving people into a group carrying a code the API cannot grant → 403 permission_not_grantable', async () => {
      const t = await scimTenant(api);
      const u = await user(t);
      const [owners] = await db.query(`INSERT INTO groups (organisation_id, name, permissions) VALUES ($1, $2, '{organisation.own}') RETURNING id`, [
        t.organisationId,
        `Owners ${rand()}`,
      ]);
      expectScimError(await scim(api, t, 'patch', `/Groups/${owners.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: u.id }] })), 403);
      expect(await groupOf(u.userName)).toBeNull();
    });

    async function scimTenantWithKey(organisationId: string, scopes: string[]) {
      const { ConnectionsService, ApiKeysService } = await import('@features/connections');
      const conn = await api.app.get(ConnectionsService).create(organisationId, 'Limited', scopes as never);
      const key = await api.app.get(ApiKeysService).create(conn.id);
      return { connectionId: conn.id, keyId: key.id, key: key.key, auth: { Authorization: `Bearer ${key.key}` } };
    }
  });

  describe('invited users as members', () => {
    it('an invited user put in a group joins into it when accepting', async () => {
      const t = await scimTenant(api);
      const invited = await user(t, 'elsewhere.example');
      const g = await group(t, `Interpreters ${rand()}`, { members: [{ value: invited.id }] });
      expect(await memberIds(t, g.id)).toEqual([invited.id]);
      const token = /token=([A-Za-z0-9_-]{43})/.exec((await mail.waitFor(invited.userName)).text)![1];
      await api.app.get(InvitationsService).accept({ token });
      expect(await groupOf(invited.userName)).toBe(g.id);
      expect(await memberIds(t, g.id)).toEqual([invited.id]);
    });
  });

  describe('PUT, lists, errors', () => {
    it('PUT replaces name and members; without members it keeps them', async () => {
      const t = await scimTenant(api);
      const [a, b] = [await user(t), await user(t)];
      const g = await group(t, `Put ${rand()}`, { members: [{ value: a.id }] });
      const put = await scim(api, t, 'put', `/Groups/${g.id}`, { schemas: [SCIM.group], displayName: `Put2 ${rand()}`, members: [{ value: b.id }] });
      expect(put.status).toBe(200);
      expect(put.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
      const keep = await scim(api, t, 'put', `/Groups/${g.id}`, { schemas: [SCIM.group], displayName: `Put3 ${rand()}` });
      expect(keep.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
    });

    it('pages with totalResults the full count, by id', async () => {
      const t = await scimTenant(api);
      const made = [await group(t), await group(t), await group(t)].map((g) => g.id);
      const p1 = (await scim(api, t, 'get', '/Groups?startIndex=1&count=2&excludedAttributes=members')).body;
      const p2 = (await scim(api, t, 'get', '/Groups?startIndex=3&count=2&excludedAttributes=members')).body;
      expect([p1.totalResults, p1.itemsPerPage, p2.itemsPerPage]).toEqual([3, 2, 1]);
      expect([...p1.Resources, ...p2.Resources].map((g: { id: string }) => g.id)).toEqual(made);
    });

    it("another organisation's group → 404; another organisation's user as a member → 422 invalidValue", async () => {
      const a = await scimTenant(api);
      const b = await scimTenant(api);
      const ga = await group(a);
      const ub = await user(b);
      for (const [method, body] of [
        ['get'],
        ['put', { schemas: [SCIM.group], displayName: 'x' }],
        ['patch', patchOp({ op: 'replace', path: 'displayName', value: 'x' })],
        ['delete'],
      ] as const) {
        expectScimError(await scim(api, b, method, `/Groups/${ga.id}`, body), 404);
      }
      expectScimError(await scim(api, a, 'patch', `/Groups/${ga.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: ub.id }] })), 422, 'invalidValue');
      expect((await scim(api, a, 'get', `/Groups/${ga.id}`)).body.displayName).toBe(ga.displayName);
    });

    it('RFC errors: no displayName → 422 invalidValue; unsupported filter → 400 invalidFilter; bad paths → 400; a group holding cases → 409', async () => {
      const t = await scimTenant(api);
      expectScimError(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], members: [] }), 422, 'invalidValue');
      expectScimError(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: 'x', members: [{ value: 'abc' }] }), 422, 'invalidValue');
      expectScimError(await scim(api, t, 'get', `/Groups?filter=${q('displayName co "x"')}`), 400, 'invalidFilter');
      const g = await group(t);
      expectScimError(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'replace', path: 'permissions', value: [] })), 400, 'invalidPath');
      expectScimError(await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'displayName' })), 422, 'invalidValue');
      expectScimError(
        await scim(api, t, 'patch', `/Groups/${g.id}`, patchOp({ op: 'replace', path: 'members[value eq "1"].value', value: '2' })),
        400,
        'mutability',
      );
      await db.query(`INSERT INTO cases (organisation_id, external_ref, group_id) VALUES ($1, $2, $3)`, [t.organisationId, `ref-${rand()}`, g.id]);
      expectScimError(await scim(api, t, 'delete', `/Groups/${g.id}`), 409);
    });
  });
});
