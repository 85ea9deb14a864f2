import { Scope } from '@kernel/core';
import { CasesService } from '@features/cases';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';

type Res = { status: number; body: any; headers: Record<string, string> };

describe('Cases', () => {
  const { api, t } = useApi({ tenant: true });
  let db: DataSource;
  let doc: any;
  let checker: OpenApiChecker;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    db = api.app.get(DataSource);
    doc = (await api.http().get('/v1/openapi.json')).body;
    checker = new OpenApiChecker(doc);
  });

  const post = (tenant: Tenant, path: string, body?: object, key?: string): Promise<Res> => {
    const req = api.http().post(path).set(tenant.auth);
    if (key) req.set('Idempotency-Key', key);
    return (body === undefined ? req : req.send(body)) as unknown as Promise<Res>;
  };
  const get = (tenant: Tenant, path: string): Promise<Res> => api.http().get(path).set(tenant.auth) as unknown as Promise<Res>;
  const expectError = (res: Res, status: number, code: string, method: string, template: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check(method, template, status, res.body);
  };
  const open = async (tenant: Tenant, body: object = { external_ref: `REF-${rand()}` }) => {
    const res = await post(tenant, '/v1/cases', body);
    expect(res.status).toBe(201);
    checker.check('POST', '/v1/cases', 201, res.body);
    return res.body.data;
  };
  const groupIn = async (organisationId: string) =>
    String((await db.query(`INSERT INTO groups (organisation_id, name) VALUES ($1, $2) RETURNING id`, [organisationId, `G ${rand()}`]))[0].id);
  const countCases = async (organisationId: string, ref: string) =>
    Number((await db.query(`SELECT count(*) AS n FROM cases WHERE organisation_id = $1 AND external_ref = $2`, [organisationId, ref]))[0].n);

  it('POST /v1/cases opens a case (201) with every field of Case', async () => {
    const group = await groupIn(t.organisationId);
    const data = await open(t, { external_ref: 'CRM-0001', title: 'Housing benefit', group_id: group });
    expect(data).toEqual({
      id: expect.stringMatching(/^\d+$/),
      external_ref: 'CRM-0001',
      title: 'Housing benefit',
      group_id: group,
      status: 'open',
      closed_at: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const again = await get(t, `/v1/cases/${data.id}`);
    expect(again.status).toBe(200);
    checker.check('GET', '/v1/cases/{id}', 200, again.body);
    expect(again.body).toEqual({ data });
  });

  it('the same external_ref again answers 200 with the same case, unchanged', async () => {
    const ref = `REF-${rand()}`;
    const first = await open(t, { external_ref: ref, title: 'First' });
    const second = await post(t, '/v1/cases', { external_ref: ref, title: 'Second' });
    expect(second.status).toBe(200);
    checker.check('POST', '/v1/cases', 200, second.body);
    expect(second.body).toEqual({ data: first });
    expect(await countCases(t.organisationId, ref)).toBe(1);
  });

  it('eight concurrent POSTs with one new external_ref open exactly one case: one 201, the rest 200', async () => {
    const ref = `RACE-${rand()}`;
    const results = await Promise.all(Array.from({ length: 8 }, () => post(t, '/v1/cases', { external_ref: ref })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(await countCases(t.organisationId, ref)).toBe(1);
  });

  it('external_ref is unique per organisation, not platform-wide', async () => {
    const other = await makeTenant(api.app);
    const ref = `SHARED-${rand()}`;
    const a = await open(t, { external_ref: ref });
    const b = await open(other, { external_ref: ref });
    expect(b.id).not.toBe(a.id);
  });

  it('Idempotency-Key: a replay answers the same status and body; another body with the key is 422 idempotency_key_reused', async () => {
    const key = `ik-${rand()}`;
    const body = { external_ref: `IK-${rand()}` };
    const first = await post(t, '/v1/cases', body, key);
    expect(first.status).toBe(201);
    const replay = await post(t, '/v1/cases', body, key);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expectError(await post(t, '/v1/cases', { external_ref: `IK-${rand()}` }, key), 422, 'idempotency_key_reused', 'POST', '/v1/cases');
  });

  it.each([
    ['missing external_ref', {}, 'external_ref'],
    ['blank external_ref', { external_ref: '   ' }, 'external_ref'],
    ['empty external_ref', { external_ref: '' }, 'external_ref'],
    ['too long external_ref', { external_ref: 'x'.repeat(201) }, 'external_ref'],
    ['non-string external_ref', { external_ref: 17 }, 'external_ref'],
    ['too long title', { external_ref: 'ok', title: 't'.repeat(201) }, 'title'],
    ['unknown field', { external_ref: 'ok', colour: 'red' }, 'colour'],
    ['non-digit group_id', { external_ref: 'ok', group_id: 'abc' }, 'group_id'],
  ])('422 validation_failed for %s, naming the field', async (_, body, field) => {
    const res = await post(t, '/v1/cases', body);
    expectError(res, 422, 'validation_failed', 'POST', '/v1/cases');
    expect(res.body.error.message).toContain(field);
  });

  it('accepts an external_ref of exactly 200 characters', async () => {
    await open(t, { external_ref: 'y'.repeat(200) });
  });

  it("422 validation_failed naming group_id for another organisation's group (or none), and nothing is opened", async () => {
    const other = await makeTenant(api.app);
    for (const group_id of [await groupIn(other.organisationId), '999999999']) {
      const ref = `G-${rand()}`;
      const res = await post(t, '/v1/cases', { external_ref: ref, group_id });
      expectError(res, 422, 'validation_failed', 'POST', '/v1/cases');
      expect(res.body.error.message).toContain('group_id');
      expect(await countCases(t.organisationId, ref)).toBe(0);
    }
  });

  it('GET /v1/cases lists newest first, by cursor', async () => {
    const tenant = await makeTenant(api.app);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await open(tenant, { external_ref: `L-${i}` }));
    const first = await get(tenant, '/v1/cases?limit=2');
    expect(first.status).toBe(200);
    checker.check('GET', '/v1/cases', 200, first.body);
    const seen = [...first.body.data];
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await get(tenant, `/v1/cases?limit=2&cursor=${cursor}`);
      checker.check('GET', '/v1/cases', 200, page.body);
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
    }
    expect(seen.map((c) => c.external_ref)).toEqual(['L-4', 'L-3', 'L-2', 'L-1', 'L-0']);
    expect(seen).toEqual([...made].reverse());
  });

  it('POST /v1/cases/{id}/conversations answers 201 with the member-app address; IK replays it', async () => {
    const c = await open(t);
    const res = await post(t, `/v1/cases/${c.id}/conversations`);
    expect(res.status).toBe(201);
    checker.check('POST', '/v1/cases/{id}/conversations', 201, res.body);
    expect(res.body).toEqual({ data: { case_id: c.id, url: `${api.config.memberAppBaseUrl}/cases/${c.id}/conversations/new` } });
    expect(res.body.data.url).toMatch(/^https:\/\//);
    const key = `ik-${rand()}`;
    const first = await post(t, `/v1/cases/${c.id}/conversations`, undefined, key);
    const replay = await post(t, `/v1/cases/${c.id}/conversations`, undefined, key);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('POST /v1/cases/{id}/conversations takes no body: a field answers 422 validation_failed', async () => {
    const c = await open(t);
    const res = await post(t, `/v1/cases/${c.id}/conversations`, { language: 'es' });
    expectError(res, 422, 'validation_failed', 'POST', '/v1/cases/{id}/conversations');
    expect((await post(t, `/v1/cases/${c.id}/conversations`, {})).status).toBe(201);
  });

  it('409 case_closed once the platform closed the case', async () => {
    const c = await open(t);
    const closed = await api.app.get(CasesService).close(c.id);
    expect(closed.status).toBe('closed');
    const res = await post(t, `/v1/cases/${c.id}/conversations`);
    expectError(res, 409, 'case_closed', 'POST', '/v1/cases/{id}/conversations');
    const read = await get(t, `/v1/cases/${c.id}`);
    checker.check('GET', '/v1/cases/{id}', 200, read.body);
    expect(read.body.data).toMatchObject({ status: 'closed', closed_at: expect.stringMatching(/Z$/) });
    // Closing again changes nothing; the same ref still answers the (closed) case.
    expect((await api.app.get(CasesService).close(c.id)).closedAt).toEqual(closed.closedAt);
    const reopen = await post(t, '/v1/cases', { external_ref: c.external_ref });
    expect(reopen.status).toBe(200);
    expect(reopen.body.data.status).toBe('closed');
  });

  it("another organisation's case, or no case, answers 404 on every {id} route", async () => {
    const other = await makeTenant(api.app);
    const theirs = await open(other);
    for (const id of [theirs.id, '999999999', 'abc']) {
      expectError(await get(t, `/v1/cases/${id}`), 404, 'not_found', 'GET', '/v1/cases/{id}');
      expectError(await post(t, `/v1/cases/${id}/conversations`), 404, 'not_found', 'POST', '/v1/cases/{id}/conversations');
    }
  });

  it('reads need cases:read and writes cases:write (403 scope_missing)', async () => {
    const c = await open(t);
    const readOnly = await makeTenant(api.app, ['cases:read'] as Scope[]);
    const writeOnly = await makeTenant(api.app, ['cases:write'] as Scope[]);
    expectError(await post(readOnly, '/v1/cases', { external_ref: 'x' }), 403, 'scope_missing', 'POST', '/v1/cases');
    expectError(await post(readOnly, `/v1/cases/${c.id}/conversations`), 403, 'scope_missing', 'POST', '/v1/cases/{id}/conversations');
    expectError(await get(writeOnly, '/v1/cases'), 403, 'scope_missing', 'GET', '/v1/cases');
    expectError(await get(writeOnly, `/v1/cases/${c.id}`), 403, 'scope_missing', 'GET', '/v1/cases/{id}');
    expect((await get(readOnly, '/v1/cases')).status).toBe(200);
    expect((await post(writeOnly, '/v1/cases', { external_ref: 'x' })).status).toBe(201);
  });

  it('documents the extra errors of each call exactly as the contract lists them', () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort();
    // The front door's, and 404 where the path names a case (a wrong method or path is no call of these: no 405).
    const common = ['400', '401', '403', '429', '500'];
    expect(statuses('/v1/cases', 'get')).toEqual(['200', ...common].sort());
    expect(statuses('/v1/cases', 'post')).toEqual(['200', '201', '409', '422', ...common].sort());
    expect(statuses('/v1/cases/{id}', 'get')).toEqual(['200', '404', ...common].sort());
    expect(statuses('/v1/cases/{id}/conversations', 'post')).toEqual(['201', '404', '409', '422', ...common].sort());
    expect(doc.paths['/v1/cases/{id}/conversations'].post.responses['409'].description).toContain('case_closed');
    expect(doc.paths['/v1/cases/{id}/conversations'].post.requestBody).toBeUndefined();
  });
});
