import { DataSource } from 'typeorm';
import { makeTenant, useApi } from './support/api';
import { ProbeRoutesModule } from './support/probe-routes.module';

describe('Idempotency-Key', () => {
  const { api, t } = useApi({ modules: [ProbeRoutesModule], tenant: true });
  let db: DataSource;
  const count = async (name: string) => Number((await db.query(`SELECT count(*) AS n FROM organisations WHERE name = $1`, [name]))[0].n);
  const unique = (prefix: string) => `${prefix} ${Math.random().toString(36).slice(2)}`;

  beforeAll(async () => {
    db = api.app.get(DataSource);
  });

  it('a repeat with the same key and request answers the same status and body, and acts once', async () => {
    const name = unique('repeat');
    const first = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-repeat').send({ name });
    expect(first.status).toBe(201);
    const second = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-repeat').send({ name });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await count(name)).toBe(1);
  });

  it('without a key every request acts', async () => {
    const name = unique('nokey');
    await api.http().post('/v1/_probe/things').set(t.auth).send({ name }).expect(201);
    await api.http().post('/v1/_probe/things').set(t.auth).send({ name }).expect(201);
    expect(await count(name)).toBe(2);
  });

  it('422 idempotency_key_reused for the same key with a different request', async () => {
    const name = unique('reuse');
    await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-reuse').send({ name }).expect(201);
    const res = await api
      .http()
      .post('/v1/_probe/things')
      .set(t.auth)
      .set('Idempotency-Key', 'k-reuse')
      .send({ name: `${name}!` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: { code: 'idempotency_key_reused', message: expect.any(String) } });
    expect(await count(`${name}!`)).toBe(0);
  });

  it('409 idempotency_key_in_use while the first request is in progress', async () => {
    const name = unique('inuse');
    const slow = api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-inuse').send({ name, delay_ms: 5 });
    const started = slow.then((r) => r);
    await new Promise((r) => setTimeout(r, 150));
    const res = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-inuse').send({ name, delay_ms: 5 });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: { code: 'idempotency_key_in_use', message: expect.any(String) } });
    expect((await started).status).toBe(201);
    expect(await count(name)).toBe(1);
  });

  it('eight concurrent identical requests with one key create exactly one object', async () => {
    const name = unique('race');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-race').send({ name, delay_ms: 1 })),
    );
    expect(await count(name)).toBe(1);
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const r of results) expect([201, 409]).toContain(r.status);
    for (const r of created) expect(r.body).toEqual(created[0].body);
    // Once settled, every repeat answers the one object.
    const after = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-race').send({ name, delay_ms: 1 });
    expect(after.status).toBe(201);
    expect(after.body).toEqual(created[0].body);
  });

  it('keys are scoped to the connection', async () => {
    const other = await makeTenant(api.app);
    const name = unique('scoped');
    const a = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-shared').send({ name });
    const b = await api.http().post('/v1/_probe/things').set(other.auth).set('Idempotency-Key', 'k-shared').send({ name });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.data.id).not.toBe(a.body.data.id);
    expect(await count(name)).toBe(2);
  });

  it('an error answer is not stored: the corrected request may use the same key', async () => {
    const name = unique('fixed');
    const bad = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-fix').send({ name, extra: 1 });
    expect(bad.status).toBe(422);
    const good = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-fix').send({ name });
    expect(good.status).toBe(201);
  });

  it('refuses a key longer than 255 characters or with spaces (400 invalid_request)', async () => {
    for (const key of ['x'.repeat(256), 'has space']) {
      const res = await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', key).send({ name: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const max = await api
      .http()
      .post('/v1/_probe/things')
      .set(t.auth)
      .set('Idempotency-Key', 'y'.repeat(255))
      .send({ name: unique('max') });
    expect(max.status).toBe(201);
  });

  it('an expired key is forgotten: the request acts again', async () => {
    const name = unique('expired');
    await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-exp').send({ name }).expect(201);
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE connection_id = $1 AND idempotency_key = 'k-exp'`, [
      t.connectionId,
    ]);
    await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-exp').send({ name }).expect(201);
    expect(await count(name)).toBe(2);
  });

  it('remembers keys for 24 hours', async () => {
    const name = unique('ttl');
    await api.http().post('/v1/_probe/things').set(t.auth).set('Idempotency-Key', 'k-ttl').send({ name }).expect(201);
    const [row] = await db.query(
      `SELECT extract(epoch FROM expires_at - created_at) AS s FROM idempotency_keys WHERE connection_id = $1 AND idempotency_key = 'k-ttl'`,
      [t.connectionId],
    );
    expect(Math.round(Number(row.s))).toBe(24 * 3600);
  });
});
