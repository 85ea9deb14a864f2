import { makeTenant, startApi, Tenant, TestApi } from './support/api';
import { freePort } from './support/private-servers';

/**
 * The member-app address the API answers must open something. With the settings `npm run dev`
 * uses (PORT only: PUBLIC_BASE_URL and MEMBER_APP_BASE_URL at their defaults), the `url` of
 * POST /v1/cases/{id}/conversations is on the api's own origin, and fetching it answers the
 * stand-in page; with a member app configured, the url is the member app's and the api serves no stand-in.
 */
describe('member-app links in the default configuration', () => {
  let api: TestApi;
  let t: Tenant;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    api = await startApi({ PORT: String(port) }, [], port);
    t = await makeTenant(api.app);
  });
  afterAll(() => api?.close());

  const openCase = async (tenant: Tenant): Promise<string> => {
    const res = await fetch(`${api.url}/v1/cases`, {
      method: 'POST',
      headers: { ...tenant.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ external_ref: `REF-${Math.random().toString(36).slice(2)}` }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { data: { id: string } }).data.id;
  };

  it('answers a conversation url that opens a page saying what it stands in for', async () => {
    const id = await openCase(t);
    const res = await fetch(`${api.url}/v1/cases/${id}/conversations`, { method: 'POST', headers: t.auth });
    expect(res.status).toBe(201);
    const { data } = (await res.json()) as { data: { case_id: string; url: string } };
    expect(data).toEqual({ case_id: id, url: `https://localhost:${port}/member-app/cases/${id}/conversations/new` });

    // The address as answered, fetched as a browser would: a page, not a connection error.
    const page = await fetch(data.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain(`<h1>A new conversation in case ${id}</h1>`);
    expect(html).toContain('stand-in for the platform’s member app');
    expect(html).toContain('MEMBER_APP_BASE_URL');
  });

  it('answers the sign-in address of mails (the base) with the stand-in too, and refuses an id that is not one', async () => {
    const home = await fetch(api.config.memberAppBaseUrl);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain('<h1>The member app</h1>');
    const bad = await fetch(`${api.config.memberAppBaseUrl}/cases/99999999999999999999/conversations/new`);
    expect(bad.status).toBe(404);
  });

  it('with MEMBER_APP_BASE_URL set, answers the member app’s address and serves no stand-in', async () => {
    const other = await startApi({ MEMBER_APP_BASE_URL: 'https://app.example.org/' });
    try {
      const tenant = await makeTenant(other.app);
      const id = await (async () => {
        const res = await fetch(`${other.url}/v1/cases`, {
          method: 'POST',
          headers: { ...tenant.auth, 'content-type': 'application/json' },
          body: JSON.stringify({ external_ref: 'REF-configured' }),
        });
        return ((await res.json()) as { data: { id: string } }).data.id;
      })();
      const res = await fetch(`${other.url}/v1/cases/${id}/conversations`, { method: 'POST', headers: tenant.auth });
      expect(((await res.json()) as { data: { url: string } }).data.url).toBe(`https://app.example.org/cases/${id}/conversations/new`);
      // Not served at all: an address the api does not have, refused as any call without a key.
      const gone = await fetch(`${other.url}/member-app/cases/${id}/conversations/new`);
      expect([gone.status, await gone.json()]).toEqual([401, { error: { code: 'unauthorised', message: expect.any(String) } }]);
    } finally {
      await other.close();
    }
  });
});
