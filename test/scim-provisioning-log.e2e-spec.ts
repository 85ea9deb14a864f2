import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Clock } from '@kernel/core';
import { Metrics } from '@kernel/metrics';
import { MAINTENANCE_JOBS } from '@kernel/queue';
import { OrganisationsService } from '@features/organisations';
import { ScimMaintenanceJobs } from '@features/scim/worker';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { expectScimError, oktaUser, patchOp, rand, Res, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';
import { OpenApiChecker } from './support/openapi-check';
import { until } from './support/until';
import { startScimJobs } from './support/scim-jobs';

const OKTA_UA = 'Okta SCIM Client 1.0.0';
const ENTRA_UA = 'Azure AD SCIM Client';
const DAY = 86_400_000;

type Event = {
  id: string;
  occurred_at: string;
  connection_id: string;
  connection_name: string;
  identity_provider: string;
  user_agent: string | null;
  operation: string;
  resource_type: string;
  resource_id: string | null;
  outcome: string;
  status: number;
  scim_type: string | null;
  detail: string | null;
  changes: {
    attributes: Array<{ attribute: string; old: unknown; new: unknown }>;
    attributes_total: number;
    members?: { added: string[]; removed: string[]; added_total: number; removed_total: number };
  } | null;
  request_id: string | null;
};

describe('SCIM provisioning log', () => {
  const { api } = useApi();
  let db: DataSource;
  beforeAll(() => {
    db = api.app.get(DataSource);
  });

  const events = async (
    t: ScimTenant,
    query = '',
  ): Promise<{ status: number; body: { data: Event[]; next_cursor: string | null; error?: { code: string; message: string } } }> =>
    api.http().get(`/v1/provisioning-events${query}`).set(t.auth) as unknown as Promise<{
      status: number;
      body: { data: Event[]; next_cursor: string | null };
    }>;
  const all = async (t: ScimTenant, query = '') => {
    const res = await events(t, query);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  /** Refusals are written once their answer is sent: wait for `n` of them. */
  const refusals = (t: ScimTenant, n: number) =>
    until(async () => {
      const rows = await all(t, '?outcome=refused&limit=100');
      return rows.length >= n ? rows : undefined;
    }, `${n} refusals logged`);
  const ok = (res: Res, status = 200) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
    return res.body;
  };

  it('records a user created, PATCHed, replaced and deleted, newest first, with what changed and never the password', async () => {
    const t = await scimTenant(api);
    const email = `ana.${rand()}@${t.domain}`;
    const created = ok(await scim(api, t, 'post', '/Users', oktaUser(email), { 'User-Agent': OKTA_UA }), 201);
    ok(
      await scim(
        api,
        t,
        'patch',
        `/Users/${created.id}`,
        patchOp({ op: 'replace', value: { 'name.givenName': 'Anna', title: 'Interpreter' } }, { op: 'replace', path: 'active', value: false }),
        { 'User-Agent': ENTRA_UA },
      ),
    );
    ok(await scim(api, t, 'put', `/Users/${created.id}`, { ...oktaUser(email, created.externalId), name: { givenName: 'Anna', familyName: 'Smith' } }));
    expect((await scim(api, t, 'delete', `/Users/${created.id}`)).status).toBe(204);
    // Reads that succeed are not logged.
    ok(await scim(api, t, 'get', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`));

    const log = await all(t);
    expect(log.map((e) => [e.operation, e.resource_type, e.resource_id, e.outcome, e.status])).toEqual([
      ['delete', 'User', created.id, 'succeeded', 204],
      ['replace', 'User', created.id, 'succeeded', 200],
      ['update', 'User', created.id, 'succeeded', 200],
      ['create', 'User', created.id, 'succeeded', 201],
    ]);
    const [deleted, replaced, patched, made] = log;
    expect(made).toMatchObject({ identity_provider: 'okta', user_agent: OKTA_UA, connection_id: t.connectionId, scim_type: null, detail: null });
    expect(made.request_id).toEqual(expect.any(String));
    expect(made.changes!.attributes).toEqual(
      expect.arrayContaining([
        { attribute: 'userName', old: null, new: email },
        { attribute: 'name.givenName', old: null, new: 'Test' },
        { attribute: 'active', old: null, new: true },
      ]),
    );
    expect(JSON.stringify(log)).not.toContain('1mz050nq');
    expect(JSON.stringify(log)).not.toMatch(/password/i);
    expect(patched).toMatchObject({ identity_provider: 'entra', user_agent: ENTRA_UA });
    expect(patched.changes!.attributes).toEqual(
      expect.arrayContaining([
        { attribute: 'name.givenName', old: 'Test', new: 'Anna' },
        { attribute: 'title', old: null, new: 'Interpreter' },
        { attribute: 'active', old: true, new: false },
      ]),
    );
    expect(replaced.changes!.attributes).toEqual(expect.arrayContaining([{ attribute: 'name.familyName', old: 'User', new: 'Smith' }]));
    expect(deleted.changes!.attributes).toEqual(expect.arrayContaining([{ attribute: 'userName', old: email, new: null }]));
  });

  it('records a group created with members, PATCHed with members added and removed, renamed and deleted', async () => {
    const t = await scimTenant(api);
    const users = [];
    for (let i = 0; i < 3; i++) users.push(ok(await scim(api, t, 'post', '/Users', oktaUser(`m${i}.${rand()}@${t.domain}`)), 201));
    const [a, b, c] = users.map((u) => u.id as string);
    const name = `Nurses ${rand()}`;
    const group = ok(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: name, members: [{ value: a }] }), 201);
    ok(
      await scim(
        api,
        t,
        'patch',
        `/Groups/${group.id}`,
        patchOp(
          { op: 'add', path: 'members', value: [{ value: b }, { value: c }] },
          { op: 'remove', path: `members[value eq "${a}"]` },
          { op: 'replace', path: 'displayName', value: `${name} NL` },
        ),
      ),
    );
    expect((await scim(api, t, 'delete', `/Groups/${group.id}`)).status).toBe(204);

    const log = await all(t, '?resource_type=Group');
    expect(log.map((e) => e.operation)).toEqual(['delete', 'update', 'create']);
    const [deleted, patched, created] = log;
    expect(created.changes).toEqual({
      attributes: [{ attribute: 'displayName', old: null, new: name }],
      attributes_total: 1,
      members: { added: [a], removed: [], added_total: 1, removed_total: 0 },
    });
    expect(patched.changes).toEqual({
      attributes: [{ attribute: 'displayName', old: name, new: `${name} NL` }],
      attributes_total: 1,
      members: { added: [b, c], removed: [a], added_total: 2, removed_total: 1 },
    });
    expect(deleted.changes!.members).toEqual({ added: [], removed: expect.arrayContaining([b, c]), added_total: 0, removed_total: 2 });
    expect(deleted.changes!.attributes).toEqual([{ attribute: 'displayName', old: `${name} NL`, new: null }]);
  });

  it('records refusals with status, scimType and detail: conflicts, bad values, bad JSON, unknown ids, missing scopes; never a 401', async () => {
    const t = await scimTenant(api);
    const email = `dup.${rand()}@${t.domain}`;
    ok(await scim(api, t, 'post', '/Users', oktaUser(email)), 201);
    expectScimError(await scim(api, t, 'post', '/Users', oktaUser(email), { 'User-Agent': 'my-own-sync/2.1 ' + 'x'.repeat(400) }), 409, 'uniqueness');
    expectScimError(await scim(api, t, 'post', '/Users', '{"schemas": ['), 400, 'invalidSyntax');
    expectScimError(await scim(api, t, 'get', '/Users/999999999'), 404);
    expectScimError(await scim(api, t, 'patch', '/Users/999999998', patchOp({ op: 'replace', path: 'active', value: false })), 404);
    const readOnly = await scimTenant(api, ['users:read']);
    expectScimError(await scim(api, readOnly, 'post', '/Groups', { schemas: [SCIM.group], displayName: 'x', members: [] }), 403);
    const bad = await api.http().post('/scim/v2/Users').set({ Authorization: 'Bearer svc_nothing' }).send({});
    expect(bad.status).toBe(401);

    const log = await refusals(t, 4);
    expect(log).toHaveLength(4);
    const byOp = Object.fromEntries(log.map((e) => [`${e.operation} ${e.status}`, e]));
    expect(byOp['create 409']).toMatchObject({
      resource_type: 'User',
      resource_id: null,
      scim_type: 'uniqueness',
      detail: expect.stringContaining(email),
      changes: null,
      identity_provider: 'other',
    });
    expect(byOp['create 409'].user_agent).toHaveLength(200);
    expect(byOp['create 409'].user_agent!.startsWith('my-own-sync/2.1 ')).toBe(true);
    expect(byOp['create 400']).toMatchObject({ scim_type: 'invalidSyntax' });
    expect(byOp['read 404']).toMatchObject({ resource_id: '999999999', resource_type: 'User' });
    expect(byOp['update 404']).toMatchObject({ resource_id: '999999998' });
    // The failed create changed nothing: the only success is the first create.
    expect((await all(t, '?outcome=succeeded')).map((e) => e.operation)).toEqual(['create']);
    // The connection without groups:write has its own refusal, in its own organisation.
    const other = await refusals(readOnly, 1);
    expect(other).toEqual([expect.objectContaining({ operation: 'create', resource_type: 'Group', status: 403, connection_id: readOnly.connectionId })]);
  });

  it('records the refusals of a good key from an address off the allow-list, or while integrations are off, for its connection', async () => {
    const t = await scimTenant(api);
    const orgs = api.app.get(OrganisationsService);
    await orgs.setAllowlist(t.organisationId, ['203.0.113.0/24']);
    expectScimError(await scim(api, t, 'post', '/Users', oktaUser(`ip.${rand()}@${t.domain}`)), 403);
    await orgs.setAllowlist(t.organisationId, []);
    await orgs.setModule(t.organisationId, false);
    expectScimError(await scim(api, t, 'delete', '/Users/12'), 403);
    await orgs.setModule(t.organisationId, true);
    const log = await refusals(t, 2);
    expect(log.map((e) => [e.operation, e.status, e.connection_id, e.detail])).toEqual([
      ['delete', 403, t.connectionId, expect.stringMatching(/integrations module is off/)],
      ['create', 403, t.connectionId, expect.stringMatching(/not allowed/)],
    ]);
  });

  it('records a refusal that rolled a change back (a PATCH whose second operation fails) as a refusal only', async () => {
    const t = await scimTenant(api);
    const user = ok(await scim(api, t, 'post', '/Users', oktaUser(`r.${rand()}@${t.domain}`)), 201);
    const res = await scim(
      api,
      t,
      'patch',
      `/Users/${user.id}`,
      patchOp({ op: 'replace', path: 'title', value: 'Lead' }, { op: 'replace', path: 'emails[type eq "work"].nonsense', value: 'x' }),
    );
    expect(res.status).toBe(400);
    const [refused] = await refusals(t, 1);
    expect(refused).toMatchObject({ operation: 'update', resource_id: user.id, status: 400, scim_type: res.body.scimType ?? null });
    expect((await all(t, '?outcome=succeeded')).map((e) => e.operation)).toEqual(['create']);
  });

  it('answers as the OpenAPI document describes: changes of users and groups, refusals, errors', async () => {
    const checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
    const t = await scimTenant(api);
    const user = ok(await scim(api, t, 'post', '/Users', oktaUser(`o.${rand()}@${t.domain}`)), 201);
    ok(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: `G ${rand()}`, members: [{ value: user.id }] }), 201);
    expectScimError(await scim(api, t, 'post', '/Users', oktaUser(user.userName)), 409, 'uniqueness');
    await refusals(t, 1);
    const res = await events(t);
    expect(res.body.data.map((e) => `${e.operation} ${e.resource_type} ${e.outcome}`)).toEqual([
      'create User refused',
      'create Group succeeded',
      'create User succeeded',
    ]);
    checker.check('GET', '/v1/provisioning-events', 200, res.body);
    const bad = await events(t, '?outcome=maybe');
    checker.check('GET', '/v1/provisioning-events', 400, bad.body);
  });

  it('never shows another organisation’s events, and needs users:read', async () => {
    const a = await scimTenant(api);
    const b = await scimTenant(api);
    ok(await scim(api, a, 'post', '/Users', oktaUser(`a.${rand()}@${a.domain}`)), 201);
    expectScimError(await scim(api, a, 'get', '/Users/999999997'), 404);
    await refusals(a, 1);
    expect(await all(b)).toEqual([]);
    expect(await all(b, '?outcome=refused')).toEqual([]);
    const noScope = await scimTenant(api, ['groups:read']);
    const refused = await events(noScope);
    expect(refused.status).toBe(403);
    expect(refused.body.error!.code).toBe('scope_missing');
  });

  it('filters by outcome, resource type and time, pages with a cursor, and refuses bad filters with 400 invalid_request', async () => {
    const t = await scimTenant(api);
    for (let i = 0; i < 5; i++) ok(await scim(api, t, 'post', '/Users', oktaUser(`p${i}.${rand()}@${t.domain}`)), 201);
    ok(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: `G ${rand()}`, members: [] }), 201);
    expectScimError(await scim(api, t, 'get', '/Groups/999999996'), 404);
    await refusals(t, 1);

    const whole = await all(t);
    expect(whole).toHaveLength(7);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await events(t, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((e) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(whole.map((e) => e.id));
    const times = whole.map((e) => e.occurred_at);
    expect([...times].sort().reverse()).toEqual(times);

    expect((await all(t, '?resource_type=Group')).map((e) => [e.operation, e.outcome])).toEqual([
      ['read', 'refused'],
      ['create', 'succeeded'],
    ]);
    expect((await all(t, '?resource_type=User&outcome=succeeded')).length).toBe(5);
    // A page of filtered events keeps its filter with the cursor.
    const first = await events(t, '?resource_type=User&limit=3');
    expect(first.body.data).toHaveLength(3);
    const second = await events(t, `?resource_type=User&limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body.data).toHaveLength(2);
    expect(second.body.next_cursor).toBeNull();

    const middle = whole[3].occurred_at;
    const since = await all(t, `?since=${encodeURIComponent(middle)}`);
    expect(since.every((e) => e.occurred_at >= middle)).toBe(true);
    const until_ = await all(t, `?until=${encodeURIComponent(middle)}`);
    expect(until_.every((e) => e.occurred_at < middle)).toBe(true);
    expect(since.length + until_.length).toBe(7);
    expect(await all(t, '?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00%2B01:00')).toEqual([]);

    for (const query of [
      '?outcome=failed',
      '?resource_type=Users',
      '?since=yesterday',
      '?since=2026-02-30T00:00:00Z',
      '?until=2026-11-27T24:00:00Z',
      '?since=2026-11-27T10:00:00Z&until=2026-11-27T09:00:00Z',
      '?limit=0',
      '?cursor=',
      '?cursor=forged',
      '?colour=blue',
    ]) {
      const res = await events(t, query);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'invalid_request' });
    }
  });

  it('a log row that cannot be written never fails the SCIM answer: the change is made, the refusal answered, both counted', async () => {
    const t = await scimTenant(api);
    const failures = () =>
      api.app
        .get(Metrics)
        .registry.getSingleMetric('integrations_provisioning_log_failures_total')!
        .get()
        .then((m) => Object.fromEntries(m.values.map((v) => [v.labels.outcome as string, v.value])));
    const before = await failures();
    const fn = `refuse_log_${t.organisationId}`;
    await db.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'log refused for the test'; END $$`);
    await db.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON provisioning_events FOR EACH ROW WHEN (NEW.organisation_id = ${Number(t.organisationId)}) EXECUTE FUNCTION ${fn}()`,
    );
    try {
      const email = `f.${rand()}@${t.domain}`;
      const created = ok(await scim(api, t, 'post', '/Users', oktaUser(email)), 201);
      ok(await scim(api, t, 'get', `/Users/${created.id}`));
      ok(await scim(api, t, 'patch', `/Users/${created.id}`, patchOp({ op: 'replace', path: 'title', value: 'Lead' })));
      expectScimError(await scim(api, t, 'post', '/Users', oktaUser(email)), 409, 'uniqueness');
      const after = await until(async () => {
        const now = await failures();
        return (now.refused ?? 0) > (before.refused ?? 0) ? now : undefined;
      }, 'the refusal counted');
      expect((after.succeeded ?? 0) - (before.succeeded ?? 0)).toBe(2);
      expect((await scim(api, t, 'get', `/Users/${created.id}`)).body.title).toBe('Lead');
    } finally {
      await db.query(`DROP TRIGGER ${fn} ON provisioning_events`);
      await db.query(`DROP FUNCTION ${fn}()`);
    }
    expect(await all(t)).toEqual([]);
  });

  describe('the 90-day sweep', () => {
    let worker: INestApplicationContext;
    beforeAll(async () => {
      worker = await startScimJobs(AppConfig.fromEnv({}));
    });
    afterAll(() => worker?.close());
    afterEach(() => jest.restoreAllMocks());

    it('removes rows older than 90 days and keeps the rest', async () => {
      const t = await scimTenant(api);
      const now = new Date();
      const seed = (ageMs: number) =>
        db.query(
          `INSERT INTO provisioning_events (organisation_id, connection_id, created_at, identity_provider, operation, resource_type, outcome, status)
           VALUES ($1, $2, $3, 'okta', 'create', 'User', 'succeeded', 201) RETURNING id`,
          [t.organisationId, t.connectionId, new Date(now.getTime() - ageMs).toISOString()],
        );
      const [old] = await seed(90 * DAY + 60_000);
      const [older] = await seed(200 * DAY);
      const [recent] = await seed(89 * DAY);
      jest.spyOn(worker.get(Clock), 'now').mockReturnValue(now);
      expect(await worker.get(ScimMaintenanceJobs).run(MAINTENANCE_JOBS.sweepProvisioningEvents)).toBeGreaterThanOrEqual(2);
      const left = await db.query(`SELECT id FROM provisioning_events WHERE id = ANY ($1::bigint[])`, [[old.id, older.id, recent.id]]);
      expect(left.map((r: { id: string }) => String(r.id))).toEqual([String(recent.id)]);
      expect((await all(t)).map((e) => e.id)).toEqual([String(recent.id)]);
    });
  });
});
