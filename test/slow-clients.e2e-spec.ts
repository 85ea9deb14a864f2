import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { openCase } from './support/documents-harness';
import { rawRequest } from './support/raw-tls';

/**
 * Slow clients are cut off within a bound (small values here, through the settings): headers that
 * stall, a body that stops making progress, a request that trickles past the total limit, an idle
 * kept-alive connection. Where an answer can still be written it is 408 in the envelope, with
 * X-Request-Id. A body that keeps making progress is not cut, however long it takes overall.
 */
describe('slow clients', () => {
  let port: number;
  const LIMITS = {
    HTTP_HEADERS_TIMEOUT_MS: '1000',
    HTTP_BODY_IDLE_TIMEOUT_MS: '1000',
    HTTP_REQUEST_TIMEOUT_MS: '4000',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
  };
  // Generous: the bound is the setting plus Node's checking interval, not a timing-precision test.
  const BOUND_MS = 3500;
  const { api, t } = useApi({ env: LIMITS, tenant: true });

  beforeAll(async () => {
    port = Number(new URL(api.url).port);
  });

  const post = (length: number, path = '/v1/groups', type = 'application/json') =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.auth.Authorization}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

  const expect408 = (res: { status: number | null; headers: string; body: string; closedAfterMs: number }) => {
    expect(res.closedAfterMs).toBeGreaterThan(0);
    expect(res.closedAfterMs).toBeLessThan(BOUND_MS);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({ error: { code: 'invalid_request', message: expect.any(String) } });
    expect(res.headers).toMatch(/\r\nX-Request-Id: \S+/i);
  };

  it('headers then a stalled body: 408 and the connection closed within the bound', async () => {
    const res = await rawRequest(port, { parts: [post(100), '{"name": "sl'], then: 'wait', timeoutMs: 8000 });
    expect408(res);
    const [{ n }] = await api.app.get(DataSource).query(`SELECT count(*)::int AS n FROM groups WHERE organisation_id = $1`, [t.organisationId]);
    expect(n).toBe(0);
  });

  it('a SCIM body that stalls: 408 in the SCIM error schema', async () => {
    const head = `POST /scim/v2/Users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.auth.Authorization}\r\nContent-Type: application/scim+json\r\nContent-Length: 100\r\n\r\n`;
    const res = await rawRequest(port, { parts: [head, '{"userName'], timeoutMs: 8000 });
    expect(res.status).toBe(408);
    expect(res.closedAfterMs).toBeLessThan(BOUND_MS);
    expect(JSON.parse(res.body)).toEqual({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '408', detail: expect.any(String) });
  });

  it('stalled mid-headers: 408 and the connection closed within the bound', async () => {
    const res = await rawRequest(port, { parts: ['GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthor'], timeoutMs: 8000 });
    expect408(res);
  });

  it('a multipart upload that stalls mid-file: 408, closed, nothing stored', async () => {
    const db = api.app.get(DataSource);
    const caseId = await openCase(db, t.organisationId);
    const B = 'SB';
    const body =
      `--${B}\r\nContent-Disposition: form-data; name="case_id"\r\n\r\n${caseId}\r\n` +
      `--${B}\r\nContent-Disposition: form-data; name="target_language"\r\n\r\nes\r\n` +
      `--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf of the fi`;
    const res = await rawRequest(port, { parts: [post(body.length + 500, '/v1/documents', `multipart/form-data; boundary=${B}`), body], timeoutMs: 8000 });
    expect408(res);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM documents WHERE organisation_id = $1`, [t.organisationId]);
    expect(n).toBe(0);
  });

  it('a body that keeps making progress is not cut, though it takes longer than the idle limit', async () => {
    const body = JSON.stringify({ name: 'slow but steady' });
    const pieces = [body.slice(0, 5), 600, body.slice(5, 10), 600, body.slice(10, 15), 600, body.slice(15)];
    const res = await rawRequest(port, { parts: [post(body.length), ...pieces], timeoutMs: 8000 });
    expect(res.status).toBe(201);
  });

  it('a body that trickles past the whole-request limit is cut', async () => {
    const parts: Array<string | number> = [post(100)];
    for (let i = 0; i < 20; i++) parts.push(' ', 500);
    const res = await rawRequest(port, { parts, timeoutMs: 15_000 });
    expect(res.closedAfterMs).toBeGreaterThan(0);
    expect(res.closedAfterMs).toBeLessThan(4000 + BOUND_MS);
    expect(res.status === null || res.status === 408).toBe(true);
  });

  it('a body that ends after an early answer leaves the keep-alive limit in force', async () => {
    const head = `POST /v1/groups HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer svc_${'4'.repeat(64)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n`;
    const res = await rawRequest(port, { parts: [head, 300, '{}'], untilClosed: true, timeoutMs: 8000 });
    expect(res.status).toBe(401);
    expect(res.closedAfterMs).toBeGreaterThan(0);
    expect(res.closedAfterMs).toBeLessThan(BOUND_MS);
  });

  it('an idle kept-alive connection is closed after the keep-alive limit', async () => {
    const get = `GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.auth.Authorization}\r\n\r\n`;
    const res = await rawRequest(port, { parts: [get], untilClosed: true, timeoutMs: 8000 });
    expect(res.status).toBe(200);
    expect(res.closedAfterMs).toBeGreaterThan(0);
    expect(res.closedAfterMs).toBeLessThan(BOUND_MS);
  });
});
