import { Clock } from '@kernel/core';
import { PublicRoutes, REFUSED_LIMIT } from '@web/auth';
import { useApi } from './support/api';

function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: { error: { code, message: expect.any(String) } } });
  expect(res.headers['x-request-id']).toBeTruthy();
}

type Verb = 'post' | 'put' | 'patch' | 'delete' | 'options';
const OTHER_METHODS: Verb[] = ['post', 'put', 'patch', 'delete', 'options'];

/**
 * Only the methods a public route serves need no key: GET (and HEAD, which answers as GET does)
 * on /v1/openapi.json and the health probes, GET and POST on the invitation page. Any other
 * method there is like any other call: 401 without a valid key (counted by the throttle, its
 * body never read), and 405 with Allow for a valid key.
 */
describe('public paths: which methods need no key', () => {
  const { api, t } = useApi({ env: { TRUSTED_PROXIES: '127.0.0.1/32' }, tenant: true });
  const bad = { Authorization: `Bearer svc_${'3'.repeat(64)}` };

  it.each(OTHER_METHODS)('%s /v1/openapi.json: 401 without a valid key, 405 with Allow with one', async (verb) => {
    for (const headers of [{}, bad]) {
      const res = await api.http()[verb]('/v1/openapi.json').set(headers);
      expectError(res, 401, 'unauthorised');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    const keyed = await api.http()[verb]('/v1/openapi.json').set(t.auth);
    expectError(keyed, 405, 'method_not_allowed');
    expect(keyed.headers.allow).toBe('GET, HEAD');
  });

  it('a body sent to /v1/openapi.json without a key is not read: 401, not 400', async () => {
    const res = await api.http().post('/v1/openapi.json').set('Content-Type', 'application/json').send('{"not json');
    expectError(res, 401, 'unauthorised');
    const form = await api.http().put('/v1/openapi.json').set('Content-Type', 'text/plain').send('x');
    expectError(form, 401, 'unauthorised');
  });

  it('GET and HEAD /v1/openapi.json stay public', async () => {
    expect((await api.http().get('/v1/openapi.json')).status).toBe(200);
    const head = await api.http().head('/v1/openapi.json');
    expect(head.status).toBe(200);
  });

  it('refusals on the other methods count towards the refused-key throttle', async () => {
    // The throttle counts per clock minute: pinned to the start of one, the refusals fall in one
    // window however long the machine takes to make them.
    const start = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 180_000);
    const pinned = jest.spyOn(api.app.get(Clock), 'now').mockReturnValue(start);
    try {
      const from = { 'X-Forwarded-For': '198.51.100.77' };
      for (let i = 0; i < REFUSED_LIMIT; i++) expect((await api.http().post('/v1/openapi.json').set(from)).status).toBe(401);
      expectError(await api.http().get('/v1/openapi.json').set(from), 429, 'rate_limited');
      expectError(await api.http().delete('/v1/openapi.json').set(from), 429, 'rate_limited');
    } finally {
      pinned.mockRestore();
    }
  });

  it('the invitation page: GET and POST need no key, other methods do', async () => {
    expect((await api.http().get('/invitations/accept?token=x')).status).not.toBe(401);
    expect((await api.http().post('/invitations/accept').type('form').send('token=x&name=y')).status).not.toBe(401);
    for (const verb of ['put', 'patch', 'delete'] as const) {
      expectError(await api.http()[verb]('/invitations/accept').set('Content-Type', 'application/json').send('{"x'), 401, 'unauthorised');
      expectError(await api.http()[verb]('/invitations/accept').set(t.auth), 405, 'method_not_allowed');
    }
  });

  it('the health probes: GET and HEAD need no key, other methods do', async () => {
    expect((await api.http().get('/health/live')).status).toBe(200);
    expect((await api.http().head('/health/live')).status).toBe(200);
    for (const verb of ['post', 'delete'] as const) {
      expectError(await api.http()[verb]('/health/live'), 401, 'unauthorised');
      expectError(await api.http()[verb]('/health/ready').set(t.auth), 405, 'method_not_allowed');
    }
  });

  it('PublicRoutes.match takes the method (HEAD is GET)', () => {
    const routes = api.app.get(PublicRoutes);
    expect(routes.match('/v1/openapi.json', 'GET')).toBeDefined();
    expect(routes.match('/v1/openapi.json', 'HEAD')).toBeDefined();
    expect(routes.match('/invitations/accept', 'POST')).toBeDefined();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']) expect(routes.match('/v1/openapi.json', method)).toBeUndefined();
    expect(routes.match('/health/live', 'POST')).toBeUndefined();
    expect(routes.match('/invitations/accept', 'DELETE')).toBeUndefined();
  });
});
