import { Scope } from '@kernel/core';
import { CaseEntity } from '@features/cases';
import { GroupEntity, PeopleManagersService } from '@features/groups';
import { PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';

type Res = { status: number; body: any; headers: Record<string, string> };

describe('Groups and permissions', () => {
  const { api, t } = useApi({ tenant: true });
  let db: DataSource;
  let checker: OpenApiChecker;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    db = api.app.get(DataSource);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  });

  const call = (tenant: Tenant, method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, body?: unknown): Promise<Res> => {
    const req = api.http()[method](path).set(tenant.auth);
    return (body === undefined ? req : req.send(body as object)) as unknown as Promise<Res>;
  };
  /** Asserts the error envelope and that the call documents this status. */
  const expectError = (res: Res, status: number, code: string, method: string, template: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check(method, template, status, res.body);
  };
  const createGroup = async (tenant: Tenant, permissions: string[] = [], name = `Group ${rand()}`) => {
    const res = await call(tenant, 'post', '/v1/groups', { name, permissions });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; name: string; permissions: string[]; created_at: string; updated_at: string };
  };
  /** Groups the API cannot make (non-grantable codes) are written directly. */
  const seedGroup = async (organisationId: string, permissions: string[]) => {
    const repo = db.getRepository(GroupEntity);
    return repo.save(repo.create({ organisationId, name: `Seeded ${rand()}`, permissions: [...permissions].sort() }));
  };
  const seedPerson = async (organisationId: string, groupId: string | null, disabled = false) => {
    const repo = db.getRepository(PersonEntity);
    return repo.save(repo.create({ organisationId, groupId, disabled, email: `p-${rand()}@example.test`, joinedAt: new Date() }));
  };
  const storedCodes = async (id: string) => (await db.getRepository(GroupEntity).findOneByOrFail({ id })).permissions;
  const managers = (organisationId: string) => api.app.get(PeopleManagersService).count(db.manager, organisationId);

  describe('success answers', () => {
    it('GET /v1/permissions lists the catalogue in order, with names and grantable, on one page', async () => {
      const res = await call(t, 'get', '/v1/permissions');
      expect(res.status).toBe(200);
      checker.check('GET', '/v1/permissions', 200, res.body);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data.map((p: { code: string }) => p.code)).toEqual([
        'people.manage',
        'cases.read_all',
        'conversations.start',
        'conversations.review',
        'documents.send',
        'integrations.manage',
        'organisation.own',
      ]);
      expect(res.body.data.filter((p: { grantable: boolean }) => !p.grantable).map((p: { code: string }) => p.code)).toEqual([
        'integrations.manage',
        'organisation.own',
      ]);
      expect(res.body.data[0]).toEqual({ code: 'people.manage', name: 'Manage people and groups', grantable: true });
    });

    it('POST creates (201), GET reads, PATCH renames and replaces, DELETE removes (204)', async () => {
      const created = await call(t, 'post', '/v1/groups', {
        name: '  Interpreters  ',
        permissions: ['documents.send', 'conversations.start', 'documents.send'],
      });
      expect(created.status).toBe(201);
      checker.check('POST', '/v1/groups', 201, created.body);
      const g = created.body.data;
      expect(g).toEqual({
        id: expect.stringMatching(/^\d+$/),
        name: 'Interpreters',
        permissions: ['conversations.start', 'documents.send'],
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      // Stamped by the database when the row is written, within the request: never before it was made.
      expect(Date.parse(g.updated_at)).toBeGreaterThanOrEqual(Date.parse(g.created_at));

      const got = await call(t, 'get', `/v1/groups/${g.id}`);
      expect(got.status).toBe(200);
      checker.check('GET', '/v1/groups/{id}', 200, got.body);
      expect(got.body).toEqual(created.body);

      const patched = await call(t, 'patch', `/v1/groups/${g.id}`, { name: 'Senior interpreters', permissions: ['cases.read_all'] });
      expect(patched.status).toBe(200);
      checker.check('PATCH', '/v1/groups/{id}', 200, patched.body);
      expect(patched.body.data).toMatchObject({ id: g.id, name: 'Senior interpreters', permissions: ['cases.read_all'], created_at: g.created_at });
      expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(g.updated_at));

      const renamedOnly = await call(t, 'patch', `/v1/groups/${g.id}`, { name: 'SENIOR interpreters' });
      expect(renamedOnly.body.data).toMatchObject({ name: 'SENIOR interpreters', permissions: ['cases.read_all'] });

      const deleted = await call(t, 'delete', `/v1/groups/${g.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.body).toEqual({});
      expect((await call(t, 'get', `/v1/groups/${g.id}`)).status).toBe(404);
    });

    it('the /permissions sub-resource: GET, PUT replaces, POST adds one, DELETE removes one', async () => {
      const g = await createGroup(t, ['documents.send']);
      const base = `/v1/groups/${g.id}/permissions`;
      const got = await call(t, 'get', base);
      expect(got.status).toBe(200);
      checker.check('GET', '/v1/groups/{id}/permissions', 200, got.body);
      expect(got.body).toEqual({ data: ['documents.send'] });

      const put = await call(t, 'put', base, { permissions: ['people.manage', 'cases.read_all'] });
      expect(put.status).toBe(200);
      checker.check('PUT', '/v1/groups/{id}/permissions', 200, put.body);
      expect(put.body).toEqual({ data: ['cases.read_all', 'people.manage'] });

      const added = await call(t, 'post', base, { code: 'conversations.review' });
      expect(added.status).toBe(200);
      checker.check('POST', '/v1/groups/{id}/permissions', 200, added.body);
      expect(added.body).toEqual({ data: ['cases.read_all', 'conversations.review', 'people.manage'] });
      const again = await call(t, 'post', base, { code: 'conversations.review' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(added.body);

      const removed = await call(t, 'delete', `${base}/cases.read_all`);
      expect(removed.status).toBe(200);
      checker.check('DELETE', '/v1/groups/{id}/permissions/{code}', 200, removed.body);
      expect(removed.body).toEqual({ data: ['conversations.review', 'people.manage'] });
      const notHeld = await call(t, 'delete', `${base}/documents.send`);
      expect(notHeld.status).toBe(200);
      expect(notHeld.body).toEqual(removed.body);
      expect(await storedCodes(g.id)).toEqual(['conversations.review', 'people.manage']);
    });

    it('lists newest first, paged by cursor', async () => {
      const own = await makeTenant(api.app);
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await createGroup(own, [], `Page ${i}`));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: Res = await call(own, 'get', `/v1/groups?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        checker.check('GET', '/v1/groups', 200, res.body);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.data.map((g: { id: string }) => g.id));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(made.map((g) => g.id).reverse());
    });
  });

  describe('scopes and organisations', () => {
    it('reads need groups:read and writes groups:write (403 scope_missing)', async () => {
      const g = await createGroup(t, ['documents.send']);
      const reader = await makeTenant(api.app, ['groups:read'] as Scope[]);
      const writer = await makeTenant(api.app, ['groups:write'] as Scope[]);
      const readerGroup = await seedGroup(reader.organisationId, []);
      const writerGroup = await seedGroup(writer.organisationId, []);
      for (const path of ['/v1/groups', `/v1/groups/${readerGroup.id}`, `/v1/groups/${readerGroup.id}/permissions`, '/v1/permissions']) {
        expect((await call(reader, 'get', path)).status).toBe(200);
      }
      for (const path of ['/v1/groups', `/v1/groups/${writerGroup.id}`, `/v1/groups/${writerGroup.id}/permissions`, '/v1/permissions']) {
        const res = await call(writer, 'get', path);
        expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 403, code: 'scope_missing' });
      }
      const writes: Array<[Parameters<typeof call>[1], string, unknown?]> = [
        ['post', '/v1/groups', { name: 'x' }],
        ['patch', `/v1/groups/${readerGroup.id}`, { name: 'y' }],
        ['delete', `/v1/groups/${readerGroup.id}`],
        ['put', `/v1/groups/${readerGroup.id}/permissions`, { permissions: [] }],
        ['post', `/v1/groups/${readerGroup.id}/permissions`, { code: 'documents.send' }],
        ['delete', `/v1/groups/${readerGroup.id}/permissions/documents.send`],
      ];
      for (const [method, path, body] of writes) {
        const res = await call(reader, method, path, body);
        expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({ method, path, status: 403, code: 'scope_missing' });
      }
      expect((await call(writer, 'post', '/v1/groups', { name: 'ok' })).status).toBe(201);
      expect(await storedCodes(g.id)).toEqual(['documents.send']);
    });

    it("another organisation's group answers 404 on every {id} route and is left as it was", async () => {
      const other = await makeTenant(api.app);
      const theirs = await createGroup(other, ['documents.send'], 'Theirs');
      const routes: Array<[Parameters<typeof call>[1], string, string, unknown?]> = [
        ['get', `/v1/groups/${theirs.id}`, '/v1/groups/{id}'],
        ['patch', `/v1/groups/${theirs.id}`, '/v1/groups/{id}', { name: 'Mine now' }],
        ['delete', `/v1/groups/${theirs.id}`, '/v1/groups/{id}'],
        ['get', `/v1/groups/${theirs.id}/permissions`, '/v1/groups/{id}/permissions'],
        ['put', `/v1/groups/${theirs.id}/permissions`, '/v1/groups/{id}/permissions', { permissions: [] }],
        ['post', `/v1/groups/${theirs.id}/permissions`, '/v1/groups/{id}/permissions', { code: 'people.manage' }],
        ['delete', `/v1/groups/${theirs.id}/permissions/documents.send`, '/v1/groups/{id}/permissions/{code}'],
        ['delete', `/v1/groups/${theirs.id}/permissions/no.such.code`, '/v1/groups/{id}/permissions/{code}'],
      ];
      for (const [method, path, template, body] of routes) expectError(await call(t, method, path, body), 404, 'not_found', method, template);
      expect((await call(t, 'get', '/v1/groups/abc')).status).toBe(404);
      expect((await call(other, 'get', `/v1/groups/${theirs.id}`)).body.data).toEqual(theirs);
    });
  });

  describe('refusals', () => {
    it('422 validation_failed naming the field', async () => {
      const existing = await createGroup(t, [], `Team ${rand()}`);
      const other = await createGroup(t);
      const cases: Array<[Parameters<typeof call>[1], string, string, unknown, string]> = [
        ['post', '/v1/groups', '/v1/groups', {}, 'name'],
        ['post', '/v1/groups', '/v1/groups', { name: '   ' }, 'name'],
        ['post', '/v1/groups', '/v1/groups', { name: 'x'.repeat(101) }, 'name'],
        ['post', '/v1/groups', '/v1/groups', { name: existing.name.toUpperCase() }, 'name'],
        ['post', '/v1/groups', '/v1/groups', { name: 'ok', colour: 'red' }, 'colour'],
        ['post', '/v1/groups', '/v1/groups', { name: 'ok', permissions: 'people.manage' }, 'permissions'],
        ['patch', `/v1/groups/${other.id}`, '/v1/groups/{id}', { name: ` ${existing.name.toLowerCase()} ` }, 'name'],
        ['patch', `/v1/groups/${other.id}`, '/v1/groups/{id}', { name: '' }, 'name'],
        ['patch', `/v1/groups/${other.id}`, '/v1/groups/{id}', { name: null }, 'name'],
        ['patch', `/v1/groups/${other.id}`, '/v1/groups/{id}', { members: [] }, 'members'],
        ['put', `/v1/groups/${other.id}/permissions`, '/v1/groups/{id}/permissions', {}, 'permissions'],
        ['post', `/v1/groups/${other.id}/permissions`, '/v1/groups/{id}/permissions', { code: 7 }, 'code'],
      ];
      for (const [method, path, template, body, field] of cases) {
        const res = await call(t, method, path, body);
        expectError(res, 422, 'validation_failed', method, template);
        expect(res.body.error.message).toMatch(new RegExp(`^${field}: `));
      }
      expect((await call(t, 'post', '/v1/groups', { name: 'y'.repeat(100) })).status).toBe(201);
      expect((await call(t, 'get', `/v1/groups/${other.id}`)).body.data).toEqual(other);
    });

    it('422 unknown_permission for an unknown code on every call that takes one', async () => {
      const g = await createGroup(t, ['documents.send']);
      const cases: Array<[Parameters<typeof call>[1], string, string, unknown?]> = [
        ['post', '/v1/groups', '/v1/groups', { name: `U ${rand()}`, permissions: ['documents.send', 'no.such.code'] }],
        ['patch', `/v1/groups/${g.id}`, '/v1/groups/{id}', { permissions: ['no.such.code'] }],
        ['put', `/v1/groups/${g.id}/permissions`, '/v1/groups/{id}/permissions', { permissions: ['no.such.code'] }],
        ['post', `/v1/groups/${g.id}/permissions`, '/v1/groups/{id}/permissions', { code: 'no.such.code' }],
        ['delete', `/v1/groups/${g.id}/permissions/no.such.code`, '/v1/groups/{id}/permissions/{code}'],
      ];
      for (const [method, path, template, body] of cases) {
        const res = await call(t, method, path, body);
        expectError(res, 422, 'unknown_permission', method, template);
        expect(res.body.error.message).toContain('no.such.code');
      }
      expect(await storedCodes(g.id)).toEqual(['documents.send']);
    });

    it('403 permission_not_grantable: granting integrations.manage or organisation.own, or taking organisation.own away', async () => {
      const g = await createGroup(t, ['documents.send']);
      for (const code of ['integrations.manage', 'organisation.own']) {
        const cases: Array<[Parameters<typeof call>[1], string, string, unknown]> = [
          ['post', '/v1/groups', '/v1/groups', { name: `N ${rand()}`, permissions: [code] }],
          ['patch', `/v1/groups/${g.id}`, '/v1/groups/{id}', { permissions: ['documents.send', code] }],
          ['put', `/v1/groups/${g.id}/permissions`, '/v1/groups/{id}/permissions', { permissions: [code] }],
          ['post', `/v1/groups/${g.id}/permissions`, '/v1/groups/{id}/permissions', { code }],
        ];
        for (const [method, path, template, body] of cases) expectError(await call(t, method, path, body), 403, 'permission_not_grantable', method, template);
      }
      expect(await storedCodes(g.id)).toEqual(['documents.send']);

      const owners = await seedGroup(t.organisationId, ['organisation.own', 'people.manage']);
      expectError(
        await call(t, 'patch', `/v1/groups/${owners.id}`, { permissions: ['people.manage'] }),
        403,
        'permission_not_grantable',
        'PATCH',
        '/v1/groups/{id}',
      );
      expectError(
        await call(t, 'put', `/v1/groups/${owners.id}/permissions`, { permissions: [] }),
        403,
        'permission_not_grantable',
        'PUT',
        '/v1/groups/{id}/permissions',
      );
      // Keeping the code while changing others is allowed.
      const kept = await call(t, 'put', `/v1/groups/${owners.id}/permissions`, { permissions: ['organisation.own', 'people.manage', 'documents.send'] });
      expect(kept.body).toEqual({ data: ['documents.send', 'organisation.own', 'people.manage'] });
    });

    it('DELETE /permissions/{code} of a non-grantable code the group holds answers 422 validation_failed naming code', async () => {
      const owners = await seedGroup(t.organisationId, ['integrations.manage', 'organisation.own']);
      for (const code of ['organisation.own', 'integrations.manage']) {
        const res = await call(t, 'delete', `/v1/groups/${owners.id}/permissions/${code}`);
        expectError(res, 422, 'validation_failed', 'DELETE', '/v1/groups/{id}/permissions/{code}');
        expect(res.body.error.message).toBe(`code: ${code} cannot be removed through the API`);
      }
      expect(await storedCodes(owners.id)).toEqual(['integrations.manage', 'organisation.own']);
      // Not held: nothing to take away, so nothing is refused.
      const plain = await createGroup(t);
      expect((await call(t, 'delete', `/v1/groups/${plain.id}/permissions/organisation.own`)).body).toEqual({ data: [] });
    });

    it('409 group_holds_cases while a case is in the group; deletable once it is not', async () => {
      const g = await createGroup(t);
      const cases = db.getRepository(CaseEntity);
      const c = await cases.save(cases.create({ organisationId: t.organisationId, externalRef: `ref-${rand()}`, groupId: g.id }));
      const res = await call(t, 'delete', `/v1/groups/${g.id}`);
      expectError(res, 409, 'group_holds_cases', 'DELETE', '/v1/groups/{id}');
      expect((await call(t, 'get', `/v1/groups/${g.id}`)).status).toBe(200);
      await cases.update({ id: c.id }, { groupId: null });
      expect((await call(t, 'delete', `/v1/groups/${g.id}`)).status).toBe(204);
    });

    it('deleting a group keeps its members: accounts and membership stay, group_id becomes null', async () => {
      const g = await createGroup(t, ['documents.send']);
      const a = await seedPerson(t.organisationId, g.id);
      const b = await seedPerson(t.organisationId, g.id, true);
      expect((await call(t, 'delete', `/v1/groups/${g.id}`)).status).toBe(204);
      const after = await db.getRepository(PersonEntity).findBy([{ id: a.id }, { id: b.id }]);
      expect(after).toHaveLength(2);
      for (const p of after) expect(p).toMatchObject({ organisationId: t.organisationId, groupId: null });
      expect(after.every((p) => p.updatedAt.getTime() >= a.updatedAt.getTime())).toBe(true);
      expect(await db.getRepository(GroupEntity).findOneBy({ id: g.id })).toBeNull();
    });
  });

  describe('last_people_manager', () => {
    /** An organisation whose only active manager is in one group (plus a disabled one and a non-manager). */
    const soleManagerOrg = async () => {
      const tenant = await makeTenant(api.app);
      const managersGroup = await createGroup(tenant, ['people.manage', 'documents.send'], 'Managers');
      const staff = await createGroup(tenant, ['documents.send'], 'Staff');
      await seedPerson(tenant.organisationId, managersGroup.id);
      await seedPerson(tenant.organisationId, managersGroup.id, true);
      await seedPerson(tenant.organisationId, staff.id);
      return { tenant, managersGroup, staff };
    };

    it('refuses with 409 and changes nothing: PATCH, PUT, DELETE /permissions/people.manage, DELETE the group', async () => {
      const { tenant, managersGroup } = await soleManagerOrg();
      // As it is once its members joined (their joining moved updated_at).
      const g = (await call(tenant, 'get', `/v1/groups/${managersGroup.id}`)).body.data;
      const attempts: Array<[Parameters<typeof call>[1], string, string, unknown?]> = [
        ['patch', `/v1/groups/${g.id}`, '/v1/groups/{id}', { name: 'Renamed', permissions: ['documents.send'] }],
        ['put', `/v1/groups/${g.id}/permissions`, '/v1/groups/{id}/permissions', { permissions: ['documents.send'] }],
        ['delete', `/v1/groups/${g.id}/permissions/people.manage`, '/v1/groups/{id}/permissions/{code}'],
        ['delete', `/v1/groups/${g.id}`, '/v1/groups/{id}'],
      ];
      for (const [method, path, template, body] of attempts) {
        expectError(await call(tenant, method, path, body), 409, 'last_people_manager', method, template);
        expect((await call(tenant, 'get', `/v1/groups/${g.id}`)).body.data).toEqual(g);
      }
      expect(await managers(tenant.organisationId)).toBe(1);
      // Other changes to the group stay possible.
      expect((await call(tenant, 'delete', `/v1/groups/${g.id}/permissions/documents.send`)).body).toEqual({ data: ['people.manage'] });
    });

    it('allows the change when another active person can still manage people', async () => {
      const { tenant, managersGroup: g } = await soleManagerOrg();
      const owners = await seedGroup(tenant.organisationId, ['organisation.own']);
      await seedPerson(tenant.organisationId, owners.id);
      expect((await call(tenant, 'delete', `/v1/groups/${g.id}/permissions/people.manage`)).status).toBe(200);
      expect(await managers(tenant.organisationId)).toBe(1);
    });

    it.each([
      ['PATCH', (id: string) => ['patch', `/v1/groups/${id}`, { permissions: [] }] as const],
      ['PUT', (id: string) => ['put', `/v1/groups/${id}/permissions`, { permissions: [] }] as const],
      ['DELETE /permissions/people.manage', (id: string) => ['delete', `/v1/groups/${id}/permissions/people.manage`, undefined] as const],
      ['DELETE the group', (id: string) => ['delete', `/v1/groups/${id}`, undefined] as const],
    ])('two concurrent demotions (%s) of the only two managers: exactly one succeeds', async (_, request) => {
      const tenant = await makeTenant(api.app);
      const groups = [await createGroup(tenant, ['people.manage']), await createGroup(tenant, ['people.manage'])];
      for (const g of groups) await seedPerson(tenant.organisationId, g.id);
      expect(await managers(tenant.organisationId)).toBe(2);
      const results = await Promise.all(
        groups.map((g) => {
          const [m, p, b] = request(g.id);
          return call(tenant, m, p, b);
        }),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses[1]).toBe(409);
      expect([200, 204]).toContain(statuses[0]);
      expect(results.find((r) => r.status === 409)!.body.error.code).toBe('last_people_manager');
      expect(await managers(tenant.organisationId)).toBe(1);
    });
  });

  describe('Idempotency-Key', () => {
    const waitForBlockedQuery = async () => {
      for (let i = 0; i < 100; i++) {
        const [row] = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (row.n > 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('the first request never blocked');
    };

    it('POST /v1/groups: a replay answers the same group and creates one', async () => {
      const name = `Idem ${rand()}`;
      const key = `g-${rand()}`;
      const first = await api.http().post('/v1/groups').set(t.auth).set('Idempotency-Key', key).send({ name });
      const second = await api.http().post('/v1/groups').set(t.auth).set('Idempotency-Key', key).send({ name });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(await db.getRepository(GroupEntity).countBy({ organisationId: t.organisationId, name })).toBe(1);
      const reused = await api
        .http()
        .post('/v1/groups')
        .set(t.auth)
        .set('Idempotency-Key', key)
        .send({ name: `${name}!` });
      expectError(reused as unknown as Res, 422, 'idempotency_key_reused', 'POST', '/v1/groups');
    });

    it('POST /v1/groups/{id}/permissions: a replay answers the same list; another body with the key is refused', async () => {
      const g = await createGroup(t, ['documents.send']);
      const path = `/v1/groups/${g.id}/permissions`;
      const first = await api.http().post(path).set(t.auth).set('Idempotency-Key', `p-${g.id}`).send({ code: 'cases.read_all' });
      await call(t, 'delete', `${path}/cases.read_all`);
      const replay = await api.http().post(path).set(t.auth).set('Idempotency-Key', `p-${g.id}`).send({ code: 'cases.read_all' });
      expect([first.status, replay.status]).toEqual([200, 200]);
      expect(replay.body).toEqual({ data: ['cases.read_all', 'documents.send'] });
      expect(await storedCodes(g.id)).toEqual(['documents.send']);
      const reused = await api.http().post(path).set(t.auth).set('Idempotency-Key', `p-${g.id}`).send({ code: 'people.manage' });
      expectError(reused as unknown as Res, 422, 'idempotency_key_reused', 'POST', '/v1/groups/{id}/permissions');
    });

    it.each([
      ['POST /v1/groups', '/v1/groups', (id: string) => ({ path: '/v1/groups', body: { name: `Busy ${id}` }, status: 201 })],
      [
        'POST /v1/groups/{id}/permissions',
        '/v1/groups/{id}/permissions',
        (id: string) => ({ path: `/v1/groups/${id}/permissions`, body: { code: 'people.manage' }, status: 200 }),
      ],
    ])('%s: 409 idempotency_key_in_use while the first request is in progress', async (_, template, build) => {
      const g = await createGroup(t);
      const { path, body, status } = build(g.id);
      const key = `busy-${rand()}`;
      // Holding the organisation's row makes the first request wait with its key taken.
      const blocker = db.createQueryRunner();
      await blocker.connect();
      await blocker.startTransaction();
      try {
        await blocker.query(`SELECT id FROM organisations WHERE id = $1 FOR UPDATE`, [t.organisationId]);
        const first = api
          .http()
          .post(path)
          .set(t.auth)
          .set('Idempotency-Key', key)
          .send(body)
          .then((r) => r);
        await waitForBlockedQuery();
        const second = await api.http().post(path).set(t.auth).set('Idempotency-Key', key).send(body);
        expectError(second as unknown as Res, 409, 'idempotency_key_in_use', 'POST', template);
        await blocker.rollbackTransaction();
        expect((await first).status).toBe(status);
      } finally {
        if (blocker.isTransactionActive) await blocker.rollbackTransaction();
        await blocker.release();
      }
    });
  });
});
