import { Logger } from '@nestjs/common';
import { WebhooksService } from '@features/webhooks';
import { request as httpsRequest } from 'node:https';
import { makeTenant, Tenant, useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, signIn, useBrowser, visitCheck } from './support/browser';

jest.setTimeout(120_000);

/** Values that fit no uuid, bigint or timestamptz column, or fit the pattern of one and are still not one. */
const NOT_IDS = [
  '-'.repeat(36),
  'a'.repeat(36),
  '0'.repeat(36),
  '99999999999999999999',
  '9223372036854775808',
  '0',
  '-1',
  '1.5',
  '1e3',
  '%201',
  'null',
  '%00',
  '%27%3B--',
  '%C3%BC',
];
const NOT_TIMES = [
  '0000-01-01T00:00',
  '2026-02-30T08:00',
  '2026-13-01T00:00',
  '2026-01-15T25:00',
  '2026-01-15T10:60',
  '99999999999999999999',
  '275760-09-13T00:00',
  '-001000-01-01T00:00',
];

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * The Integrations section at its edges: values in addresses and forms that are not of their
 * column's type (no 500, nothing logged as an error), addresses and methods it does not serve
 * (its own 404 and 405 pages, never the REST envelope), and the Origin it takes (the configured
 * public origin, whatever Host the request names).
 */
describe('Integrations section: wrong values, unknown addresses, forged hosts', () => {
  const { api } = useApi({
    ownAddress: true,
    env: {
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      // The sweep makes hundreds of keyed calls: the rate limit is not what it tests.
      RATE_LIMIT_BURST: '100000',
      SCIM_RATE_LIMIT_BURST: '100000',
    },
  });
  const { context, page } = useBrowser();
  let t: Tenant;
  let manager: ConsolePerson;
  let webhookId: string;

  beforeAll(async () => {
    t = await makeTenant(api.app, undefined, 'Edges org');
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Ada Lovelace');
    const { webhook } = await api.app
      .get(WebhooksService)
      .create(
        { organisationId: t.organisationId, connectionId: t.connectionId, scopes: ['webhooks:manage', 'conversations:read'] },
        { url: 'https://127.0.0.1/edges', events: ['conversation.ended'] },
      );
    webhookId = webhook.id;
  });

  /** The signed-in browser's session cookie and the CSRF token of its pages. */
  async function session(): Promise<{ cookie: string; csrf: string }> {
    await signIn(page, api, manager.personId);
    const cookie = (await context.cookies()).find((c) => c.name === '__Host-ia-console')!;
    const csrf = (await page.getAttribute('input[name="_csrf"]', 'value'))!;
    return { cookie: `${cookie.name}=${cookie.value}`, csrf };
  }

  /** Express's routes whose path starts with `prefix` and names a parameter. */
  function routesWithParams(prefix: RegExp): Array<{ path: string; method: string }> {
    const express = api.app.getHttpAdapter().getInstance() as { router?: { stack: RouteLayer[] }; _router?: { stack: RouteLayer[] } };
    const stack = (express.router ?? express._router)!.stack;
    return stack
      .filter((l) => l.route && prefix.test(l.route.path) && l.route.path.includes(':'))
      .flatMap((l) => Object.keys(l.route!.methods).map((m) => ({ path: l.route!.path, method: m.toUpperCase() })));
  }

  /** Every error-level line Nest's loggers (the exception filters', TypeORM's) write while `run` runs. */
  async function errorsDuring(run: () => Promise<void>): Promise<string[]> {
    const spy = jest.spyOn(Logger.prototype, 'error');
    try {
      await run();
      return spy.mock.calls.map((c) => JSON.stringify(c).slice(0, 300));
    } finally {
      spy.mockRestore();
    }
  }

  describe('values that are not of their column’s type', () => {
    it('a reveal id that fits the pattern but is not a uuid answers the “no longer shown” page, as an unknown one does', async () => {
      const { cookie } = await session();
      const statuses: Record<string, number> = {};
      const errors = await errorsDuring(async () => {
        for (const id of ['-'.repeat(36), 'a'.repeat(36), '0'.repeat(36), '00000000-0000-0000-0000-000000000000']) {
          const res = await fetch(`${api.url}/console/reveal/${id}`, { headers: { cookie } });
          statuses[id] = res.status;
          expect(await res.text()).toContain('This secret is no longer shown');
        }
      });
      expect(Object.values(statuses)).toEqual([410, 410, 410, 410]);
      expect(errors).toEqual([]);
    });

    it('every console address with parameters, with each parameter not an id: no 500, no error logged', async () => {
      const { cookie, csrf } = await session();
      const routes = routesWithParams(/^\/console\//);
      // The sweep covers the pages that take ids (a new route with parameters joins it by itself).
      expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
        expect.arrayContaining([
          'GET /console/reveal/:id',
          'GET /console/connections/:id',
          'POST /console/connections/:id/keys/:keyId/revoke',
          'POST /console/connections/:id/webhooks/:wid/test',
          'GET /console/connections/:id/webhooks/:wid/deliveries/:did',
        ]),
      );
      const valid: Record<string, string> = { id: t.connectionId, wid: webhookId, keyId: t.keyId, did: 'f'.repeat(32), name: 'console.css' };
      const answers: string[] = [];
      const errors = await errorsDuring(async () => {
        for (const { path, method } of routes) {
          const params = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
          for (const bad of params) {
            for (const value of NOT_IDS) {
              const url = path.replace(/:(\w+)/g, (_, name: string) => (name === bad ? value : valid[name]));
              const res = await fetch(`${api.url}${url}`, {
                method,
                redirect: 'manual',
                headers: { cookie, origin: api.url, 'content-type': 'application/x-www-form-urlencoded' },
                body: method === 'GET' ? undefined : new URLSearchParams({ _csrf: csrf, since: '2020-01-01T00:00', scopes: 'cases:read' }).toString(),
              });
              await res.arrayBuffer();
              answers.push(`${res.status} ${method} ${url}`);
            }
          }
        }
      });
      expect(answers.length).toBeGreaterThan(100);
      expect(answers.filter((a) => a.startsWith('5'))).toEqual([]);
      expect(errors).toEqual([]);
      // An id that is not one names nothing: the 404 page (the reveal's own answer is 410).
      expect(answers).toContain(`404 GET /console/connections/${'9'.repeat(20)}`);
      expect(answers).toContain(`404 GET /console/connections/${t.connectionId}/webhooks/${'-'.repeat(36)}/deliveries`);
    });

    it('query and form values that reach typed columns (times, ids, cursors): no 500, no error logged, a bad time refused next to its field', async () => {
      const { cookie, csrf } = await session();
      const hookPage = `${api.url}/console/connections/${t.connectionId}/webhooks`;
      const deliveries = `${hookPage}/${webhookId}/deliveries`;
      const answers: Array<{ status: number; what: string; body: string }> = [];
      const call = async (what: string, url: string, form?: Record<string, string>) => {
        const res = await fetch(url, {
          method: form ? 'POST' : 'GET',
          redirect: 'manual',
          headers: { cookie, origin: api.url, 'content-type': 'application/x-www-form-urlencoded' },
          body: form ? new URLSearchParams({ _csrf: csrf, ...form }).toString() : undefined,
        });
        answers.push({ status: res.status, what, body: await res.text() });
      };
      const errors = await errorsDuring(async () => {
        for (const since of NOT_TIMES) {
          await call(`GET since=${since}`, `${deliveries}/resend-failed?since=${encodeURIComponent(since)}`);
          await call(`POST since=${since}`, `${deliveries}/resend-failed`, { since });
        }
        for (const value of NOT_IDS) {
          const v = decodeURIComponent(value);
          await call(`tested=${value}`, `${hookPage}?tested=${encodeURIComponent(v)}`);
          await call(`cursor=${value}`, `${deliveries}?cursor=${encodeURIComponent(v)}`);
          await call(`state/event=${value}`, `${deliveries}?state=${encodeURIComponent(v)}&event=${encodeURIComponent(v)}`);
          await call(`done=${value}`, `${api.url}/console?done=${encodeURIComponent(v)}`);
        }
      });
      expect(answers.filter((a) => a.status >= 500).map((a) => a.what)).toEqual([]);
      expect(errors).toEqual([]);
      // Every time out of range is refused as a time (422, the field's message), none read as another time.
      const times = answers.filter((a) => a.what.includes('since='));
      expect(times.map((a) => `${a.what} ${a.status}`)).toEqual(times.map((a) => `${a.what} 422`));
      for (const a of times) {
        // The confirmation (GET) says so next to the field; the resend itself (POST) on its refusal page.
        expect(a.body).toContain(a.what.startsWith('GET') ? 'Enter the time to send from as a date and time in UTC' : 'not a time');
      }
    });

    it('REST and SCIM addresses with an id that is not one: 404 in their envelope, no 500, no error logged', async () => {
      const routes = routesWithParams(/^\/(v1|scim\/v2)\//);
      expect(routes.length).toBeGreaterThan(15);
      const answers: string[] = [];
      const errors = await errorsDuring(async () => {
        for (const { path, method } of routes) {
          const params = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
          for (const bad of params) {
            for (const value of NOT_IDS) {
              const url = path.replace(/:(\w+)/g, (_, name: string) => (name === bad ? value : '1'));
              const res = await fetch(`${api.url}${url}`, {
                method,
                headers: { ...t.auth, 'content-type': 'application/json', 'idempotency-key': `edges-${Math.random()}` },
                body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
              });
              await res.arrayBuffer();
              answers.push(`${res.status} ${method} ${url}`);
            }
          }
        }
      });
      expect(answers.filter((a) => a.startsWith('5'))).toEqual([]);
      expect(errors).toEqual([]);
      expect(answers).toContain(`404 GET /v1/cases/${'9'.repeat(20)}`);
      expect(answers).toContain(`404 GET /scim/v2/Users/${'9'.repeat(20)}`);
    });
  });

  describe('addresses and methods the console does not serve', () => {
    const expectConsolePage = async (res: Response, status: number, title: string) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('www-authenticate')).toBeNull();
      const html = await res.text();
      expect(html).toContain(`<h1>${title}</h1>`);
      expect(html).not.toContain('"error"');
    };

    it('answers an unknown address with the console’s 404 page, signed in or not', async () => {
      const { cookie } = await session();
      for (const headers of [{}, { cookie }] as Array<Record<string, string>>) {
        for (const path of ['/console/nope', '/console/connections/1/nope', '/Console/Nope', '/console/assets/nope.css', '/console/sign-in/nope/deeper']) {
          await expectConsolePage(await fetch(`${api.url}${path}`, { headers }), 404, 'Page not found');
        }
        // Any method, any body: still the console's page, not the API's 401.
        await expectConsolePage(
          await fetch(`${api.url}/console/nope`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' }),
          404,
          'Page not found',
        );
        const head = await fetch(`${api.url}/console/nope`, { method: 'HEAD', headers });
        expect([head.status, head.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
      }
      // The API's own unknown paths still answer in its envelope.
      const rest = await fetch(`${api.url}/v1/nope`);
      expect([rest.status, await rest.json()]).toEqual([401, { error: { code: 'unauthorised', message: expect.any(String) } }]);
    });

    it('answers a method an address does not take with the console’s 405 page and Allow, signed in or not', async () => {
      const { cookie } = await session();
      for (const headers of [{}, { cookie }] as Array<Record<string, string>>) {
        for (const [method, path, allow] of [
          ['DELETE', `/console/connections/${t.connectionId}`, 'GET, HEAD'],
          ['PUT', '/console/sign-in', 'GET, HEAD, POST'],
          ['POST', `/console/connections/${t.connectionId}`, 'GET, HEAD'],
          ['PATCH', '/console', 'GET, HEAD'],
        ]) {
          const res = await fetch(`${api.url}${path}`, { method, headers, redirect: 'manual' });
          expect(res.headers.get('allow')).toBe(allow);
          await expectConsolePage(res, 405, 'This page cannot take that request');
        }
      }
    });

    it('the 404 and 405 pages pass axe at desktop and phone widths', async () => {
      for (const signedIn of [false, true]) {
        if (signedIn) await signIn(page, api, manager.personId);
        const who = signedIn ? 'signed-in' : 'signed-out';
        const res = await page.goto(`${api.url}/console/no-such-page`);
        expect(res!.status()).toBe(404);
        expect(await page.textContent('h1')).toBe('Page not found');
        // visitCheck: at desktop width and at 390 px.
        await visitCheck(page, `not-found-${who}`);

        // A browser only navigates with GET: the request is turned into a DELETE on its way out.
        await page.route(`${api.url}/console/connections/${t.connectionId}`, (route) => route.continue({ method: 'DELETE' }));
        const wrong = await page.goto(`${api.url}/console/connections/${t.connectionId}`);
        await page.unrouteAll();
        expect(wrong!.status()).toBe(405);
        expect(await page.textContent('h1')).toBe('This page cannot take that request');
        await visitCheck(page, `method-not-allowed-${who}`);
      }
    });
  });

  describe('the Origin a form must come from', () => {
    /** A POST naming the Host it likes (fetch does not let a caller set Host). */
    const postWithHost = (path: string, headers: Record<string, string>, body: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpsRequest(
          `${api.url}${path}`,
          { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    it('refuses a forged Host with an Origin to match, and takes the configured public origin whatever the Host', async () => {
      const { cookie, csrf } = await session();
      const form = `_csrf=${encodeURIComponent(csrf)}`;
      const forged = await postWithHost('/console/sign-out', { cookie, host: 'evil.example', origin: 'https://evil.example' }, form);
      expect(forged.status).toBe(403);
      expect(forged.text).toContain('This form was sent from another site');
      const forgedPort = await postWithHost('/console/sign-out', { cookie, host: 'localhost:1', origin: 'https://localhost:1' }, form);
      expect(forgedPort.status).toBe(403);
      // Still signed in: neither did anything.
      await page.goto(`${api.url}/console`);
      expect(await page.textContent('h1')).toBe('Connections');
      const configured = await postWithHost('/console/sign-out', { cookie, host: 'evil.example', origin: api.url }, form);
      expect(configured.status).toBe(303);
    });
  });
});
