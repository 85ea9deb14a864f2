import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { ConsoleAccessService } from '@web/console';
import { HealthServer } from '../apps/worker/src/health/health-server';
import { MetricsServer } from '../apps/api/src/metrics/metrics-server';
import { useApi } from './support/api';
import { makeConsolePerson } from './support/browser';
import { rawRequest, RawAnswer } from './support/raw-tls';
import { startWebhookWorker } from './support/webhook-worker';

jest.setTimeout(60_000);

/**
 * A client that writes its whole request and then half-closes its side (`socket.end(request)`, as
 * some HTTP clients, proxies and health checkers do) gets its answer on every port that serves
 * HTTP, including answers whose handler awaits (the key check, the rate limit, a database read);
 * the server closes the connection after the answer. A half-closed connection whose request never
 * completes is closed by the server, not held.
 */
describe('a request followed by the client half-closing its side', () => {
  // Small limits, so that a connection the server must cut is cut soon (the test waits far longer).
  const { api, t } = useApi({
    tenant: true,
    env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_BODY_IDLE_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '4000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000' },
  });
  let worker: INestApplicationContext;

  beforeAll(async () => {
    worker = await startWebhookWorker(AppConfig.fromEnv({ WORKER_HEALTH_PORT: '0' }));
  });
  afterAll(() => worker?.close());

  const apiPort = () => Number(new URL(api.url).port);
  const get = (path: string, headers: Record<string, string> = {}) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
  /** Writes the request, half-closes, and reads until the server closes (giving up long after any limit). */
  const halfClosed = (port: number, request: string, plain = false): Promise<RawAnswer> =>
    rawRequest(port, { parts: [request], then: 'end', plain, timeoutMs: 20_000 });

  /** An answer was written in full, and then the server closed the connection. */
  const answered = (res: RawAnswer, status: number): string => {
    expect(res.status).toBe(status);
    expect(res.closedAfterMs).toBeGreaterThanOrEqual(0);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(res.headers)?.[1]);
    expect(Buffer.byteLength(res.body, 'latin1')).toBe(length);
    return Buffer.from(res.body, 'latin1').toString('utf8');
  };

  it('REST: GET /v1/me with a key is answered', async () => {
    const body = answered(await halfClosed(apiPort(), get('/v1/me', t.auth)), 200);
    expect(JSON.parse(body).data.organisation.id).toBe(t.organisationId);
  });

  it('SCIM: GET /scim/v2/Users is answered', async () => {
    const body = answered(await halfClosed(apiPort(), get('/scim/v2/Users', t.auth)), 200);
    expect(JSON.parse(body).schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
  });

  it("the api's readiness and liveness probes are answered", async () => {
    expect(JSON.parse(answered(await halfClosed(apiPort(), get('/health/ready')), 200))).toEqual(expect.objectContaining({ status: 'ok' }));
    answered(await halfClosed(apiPort(), get('/health/live')), 200);
  });

  it('a signed-in console page is answered', async () => {
    const person = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage']);
    const access = api.app.get(ConsoleAccessService);
    const { token } = await access.issueLink(person.personId, 'handover');
    const session = await access.redeemLink(token);
    const body = answered(await halfClosed(apiPort(), get('/console', { Cookie: `__Host-ia-console=${session!.sessionToken}` })), 200);
    expect(body).toContain('<html');
  });

  it("the api's metrics port is answered", async () => {
    const body = answered(await halfClosed(api.app.get(MetricsServer).port!, get('/metrics'), true), 200);
    expect(body).toContain('integrations_');
  });

  it("the worker's health port is answered: readiness, liveness and metrics", async () => {
    const port = worker.get(HealthServer).port;
    expect(JSON.parse(answered(await halfClosed(port, get('/health/ready'), true), 200))).toEqual({ status: 'ok' });
    answered(await halfClosed(port, get('/health/live'), true), 200);
    expect(answered(await halfClosed(port, get('/metrics'), true), 200)).toContain('integrations_');
  });

  it('a half-closed connection whose request never completes is closed by the server', async () => {
    const post = `POST /v1/groups HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.auth.Authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const cases: Array<[number, string, boolean]> = [
      [apiPort(), 'GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthor', false],
      [apiPort(), `${post}{"name": "ha`, false],
      [apiPort(), '', false],
      [worker.get(HealthServer).port, 'GET /health/ready HTTP/1.1\r\nHo', true],
      [api.app.get(MetricsServer).port!, 'GET /metr', true],
    ];
    for (const [port, request, plain] of cases) {
      // closedAfterMs is -1 when the test gave up waiting: the server held the connection.
      expect([request, (await halfClosed(port, request, plain)).closedAfterMs >= 0]).toEqual([request, true]);
    }
  });
});
