import { ConnectionsService } from '@features/connections';
import { DataSource } from 'typeorm';
import { request as httpRequest } from 'node:http';
import { makeTenant, startApi, useApi } from './support/api';
import { ProbeRoutesModule } from './support/probe-routes.module';
import { rawExchange } from './support/raw-tls';

function expectErrorShape(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  expect(res.headers['x-request-id']).toBeTruthy();
}

describe('common rules of the REST interface', () => {
  const { api, t } = useApi({ modules: [ProbeRoutesModule], tenant: true });

  it('answers a single object as {data} and nothing else, with X-Request-Id', async () => {
    const res = await api.http().get('/v1/me').set(t.auth);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.data).toMatchObject({ id: t.connectionId, organisation: { id: t.organisationId }, key: { id: t.keyId, last_four: t.key.slice(-4) } });
    expect(JSON.stringify(res.body)).not.toContain(t.key);
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const ok = await api.http().get('/v1/me').set(t.auth).set('X-Request-Id', 'partner-trace-0001');
    expect(ok.headers['x-request-id']).toBe('partner-trace-0001');
    const bad = await api.http().get('/v1/me').set(t.auth).set('X-Request-Id', 'has spaces and <tags>');
    expect(bad.headers['x-request-id']).not.toBe('has spaces and <tags>');
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('404 not_found for an unknown path', async () => {
    expectErrorShape(await api.http().get('/v1/nothing-here').set(t.auth), 404, 'not_found');
  });

  it('checks the key before anything else: without a valid key an unknown path, a wrong method or a bad body is 401', async () => {
    const bad = { Authorization: `Bearer svc_${'2'.repeat(64)}` };
    for (const headers of [{}, bad]) {
      expectErrorShape(await api.http().get('/v1/nothing-here').set(headers), 401, 'unauthorised');
      expectErrorShape(await api.http().delete('/v1/me').set(headers), 401, 'unauthorised');
      const body = await api.http().post('/v1/_probe/things').set(headers).set('Content-Type', 'application/json').send('{"name": "x",');
      expectErrorShape(body, 401, 'unauthorised');
      const type = await api.http().post('/v1/_probe/things').set(headers).set('Content-Type', 'text/plain').send('name=x');
      expectErrorShape(type, 401, 'unauthorised');
    }
    // Only GET (and HEAD) of the description needs no key: another method there is 401 without one, 405 with one.
    expectErrorShape(await api.http().post('/v1/openapi.json'), 401, 'unauthorised');
    const post = await api.http().post('/v1/openapi.json').set(t.auth);
    expectErrorShape(post, 405, 'method_not_allowed');
    expect(post.headers.allow).toBe('GET, HEAD');
    expect((await api.http().get('/v1/openapi.json')).status).toBe(200);
  });

  it('405 method_not_allowed with Allow for a known path and a wrong method', async () => {
    const res = await api.http().delete('/v1/me').set(t.auth);
    expectErrorShape(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
    const post = await api.http().post('/v1/_probe/scoped').set(t.auth);
    expectErrorShape(post, 405, 'method_not_allowed');
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('400 invalid_request for a malformed JSON body, and nothing is created', async () => {
    const res = await api.http().post('/v1/_probe/things').set(t.auth).set('Content-Type', 'application/json').send('{"name": "x",');
    expectErrorShape(res, 400, 'invalid_request');
  });

  it('400 invalid_request for a body sent with a wrong content type', async () => {
    const res = await api.http().post('/v1/_probe/things').set(t.auth).set('Content-Type', 'text/plain').send('name=x');
    expectErrorShape(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('application/json');
    const form = await api.http().post('/v1/_probe/things').set(t.auth).type('form').send({ name: 'x' });
    expectErrorShape(form, 400, 'invalid_request');
  });

  it('checks a body on any method (a request without one skips parsing): a GET with a bad body is 400, with a JSON body 200', async () => {
    const bad = await api.http().get('/v1/me').set(t.auth).set('Content-Type', 'text/plain').send('x');
    expectErrorShape(bad, 400, 'invalid_request');
    const malformed = await api.http().get('/v1/me').set(t.auth).set('Content-Type', 'application/json').send('{"a":');
    expectErrorShape(malformed, 400, 'invalid_request');
    const json = await api.http().get('/v1/me').set(t.auth).set('Content-Type', 'application/json').send('{}');
    expect(json.status).toBe(200);
  });

  it('422 validation_failed naming the field: unknown field, missing field, wrong type', async () => {
    const unknown = await api.http().post('/v1/_probe/things').set(t.auth).send({ name: 'x', colour: 'red' });
    expectErrorShape(unknown, 422, 'validation_failed');
    expect(unknown.body.error.message).toContain('colour');
    const missing = await api.http().post('/v1/_probe/things').set(t.auth).send({});
    expectErrorShape(missing, 422, 'validation_failed');
    expect(missing.body.error.message).toContain('name');
    const wrongType = await api.http().post('/v1/_probe/things').set(t.auth).send({ name: 42 });
    expectErrorShape(wrongType, 422, 'validation_failed');
    expect(wrongType.body.error.message).toMatch(/^name: /);
    const array = await api
      .http()
      .post('/v1/_probe/things')
      .set(t.auth)
      .send([{ name: 'x' }]);
    expectErrorShape(array, 422, 'validation_failed');
  });

  it('422 naming the field for a NUL character (Postgres cannot store it), 400 for JSON nested too deep; nothing is created', async () => {
    const before = await api.app.get(DataSource).query('SELECT count(*)::int AS n FROM organisations');
    const nul = await api.http().post('/v1/_probe/things').set(t.auth).send({ name: 'a\u0000b' });
    expectErrorShape(nul, 422, 'validation_failed');
    expect(nul.body.error.message).toMatch(/^name: .*NUL/);
    const deep = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`;
    const res = await api.http().post('/v1/_probe/things').set(t.auth).set('Content-Type', 'application/json').send(deep);
    expectErrorShape(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('nested');
    const inField = await api
      .http()
      .post('/v1/_probe/things')
      .set(t.auth)
      .set('Content-Type', 'application/json')
      .send(`{"name":${'['.repeat(3000)}${']'.repeat(3000)}}`);
    expectErrorShape(inField, 400, 'invalid_request');
    const after = await api.app.get(DataSource).query('SELECT count(*)::int AS n FROM organisations');
    expect(after[0].n).toBe(before[0].n);
  });

  it('400 invalid_request for a body that does not decompress as its Content-Encoding says', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await api
        .http()
        .post('/v1/_probe/things')
        .set(t.auth)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .send('not compressed');
      expectErrorShape(res, 400, 'invalid_request');
    }
  });

  it('an id is written as answered: a leading zero names no object (404)', async () => {
    const group = await api
      .http()
      .post('/v1/groups')
      .set(t.auth)
      .send({ name: `zeros ${Date.now()}` });
    expect(group.status).toBe(201);
    expect((await api.http().get(`/v1/groups/${group.body.data.id}`).set(t.auth)).status).toBe(200);
    for (const id of [`0${group.body.data.id}`, `00${group.body.data.id}`, '0']) {
      expectErrorShape(await api.http().get(`/v1/groups/${id}`).set(t.auth), 404, 'not_found');
    }
  });

  it('400 invalid_request in the envelope, with X-Request-Id, for headers over 16 KB (refused by Node before any handler)', async () => {
    const res = await api
      .http()
      .get(`/v1/_probe/connections?cursor=${'a'.repeat(20_000)}`)
      .set(t.auth);
    expectErrorShape(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('16 KB');
    expect(res.headers.connection).toBe('close');
    // The server is unharmed.
    expect((await api.http().get('/v1/me').set(t.auth)).status).toBe(200);
  });

  it('400 invalid_request for bad query parameters', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'limit=0x10', 'limit=1e1', 'limit=10.0', 'limit=%2010', 'colour=red', 'cursor=%21%21']) {
      const res = await api.http().get(`/v1/_probe/connections?${q}`).set(t.auth);
      expectErrorShape(res, 400, 'invalid_request');
    }
    const badCursor = await api
      .http()
      .get(`/v1/_probe/connections?cursor=${Buffer.from('[1,2]').toString('base64url')}`)
      .set(t.auth);
    expectErrorShape(badCursor, 400, 'invalid_request');
    expect(badCursor.body.error.message).toContain('cursor');
  });

  it('500 server_error with an opaque message carrying an error id', async () => {
    const res = await api.http().get('/v1/_probe/boom').set(t.auth);
    expectErrorShape(res, 500, 'server_error');
    expect(res.body.error.message).not.toContain('kaboom');
    expect(res.body.error.message).toMatch(/Error id: [0-9a-f-]{36}/);
  });

  it('pages lists newest first by cursor, {data, next_cursor} and nothing else', async () => {
    const own = await makeTenant(api.app);
    const conns = api.app.get(ConnectionsService);
    for (let i = 1; i <= 4; i++) await conns.create(own.organisationId, `extra ${i}`, []);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any } = await api
        .http()
        .get(`/v1/_probe/connections?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        .set(own.auth);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'next_cursor']);
      seen.push(...res.body.data.map((c: { name: string }) => c.name));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(['extra 4', 'extra 3', 'extra 2', 'extra 1', 'Test connection']);
    expect(pages).toBe(3);
    const first = await api.http().get('/v1/_probe/connections').set(own.auth);
    expect(first.body.next_cursor).toBeNull();
  });

  it('answers in the envelope, with X-Request-Id, what Node would answer bare: no Host, an unknown Expect, CONNECT', async () => {
    const raw = (text: string) => rawExchange(api.url, text);
    const check = (r: { head: string; body: string }, status: number, code: string) => {
      expect(r.head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(r.head).toMatch(/\r\nx-request-id: \S+/i);
      expect(JSON.parse(r.body)).toEqual({ error: { code, message: expect.any(String) } });
    };
    check(await raw(`GET /v1/me HTTP/1.1\r\nAuthorization: Bearer ${t.key}\r\nConnection: close\r\n\r\n`), 400, 'invalid_request');
    check(await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nAuthorization: Bearer ${t.key}\r\n\r\n`), 400, 'invalid_request');
    check(await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 405, 'method_not_allowed');
    // HTTP/1.0 needs no Host.
    const old = await raw(`GET /v1/me HTTP/1.0\r\nAuthorization: Bearer ${t.key}\r\n\r\n`);
    expect(old.head).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('does not answer plain HTTP on the HTTPS port', async () => {
    const port = new URL(api.url).port;
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/openapi.json', timeout: 2000 }, (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (e) => resolve(`error ${e.message}`));
      req.on('timeout', () => {
        req.destroy();
        resolve('timeout');
      });
      req.end();
    });
    expect(outcome).not.toMatch(/^status 2/);
    expect(outcome).not.toMatch(/^status 3/);
  });
});

describe('shutdown', () => {
  it('answers a request that is still in flight when the api closes', async () => {
    const api = await startApi({}, [ProbeRoutesModule]);
    const t = await makeTenant(api.app);
    // Waits a second before its first query: the app has begun closing by then.
    const inFlight = api
      .http()
      .post('/v1/_probe/things')
      .set(t.auth)
      .send({ name: 'drained', wait_first: 10 })
      .then((r) => r);
    await new Promise((r) => setTimeout(r, 150));
    const closing = api.close();
    const res = await inFlight;
    await closing;
    expect(res.status).toBe(201);
    expect(res.body.data.name).toBe('drained');
  });
});
