import { DataSource } from 'typeorm';
import { OrganisationsService } from '@features/organisations';
import { makeTenant, Tenant, useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, signIn, submit, useBrowser, visitCheck } from './support/browser';

jest.setTimeout(120_000);

const SCIM_SCOPES = ['groups:read', 'groups:write', 'users:read', 'users:write'];

/**
 * The SCIM page of the Integrations section, driven in a real Chromium against the real api: the
 * base URL from PUBLIC_BASE_URL, "Set up provisioning" making a connection with exactly the four
 * SCIM scopes and its key shown once, the key working on /scim/v2 and nowhere else, the steps for
 * Okta and Entra ID, and who may use it; axe and screenshots at desktop width and at 390 px.
 */
describe('Integrations section: SCIM provisioning set-up (browser)', () => {
  const { api } = useApi({ ownAddress: true });
  const { context, page } = useBrowser();
  let t: Tenant;
  let manager: ConsolePerson;
  let owner: ConsolePerson;

  beforeAll(async () => {
    t = await makeTenant(api.app, ['cases:read'], 'SCIM console org');
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Ada Lovelace');
    owner = await makeConsolePerson(api.app, t.organisationId, ['organisation.own'], 'Grace Hopper');
  });

  const sql = (text: string, params: unknown[] = []) => api.app.get(DataSource).query(text, params);
  const main = async () => (await page.textContent('main')) ?? '';
  const scimConnections = async (organisationId: string): Promise<Array<{ id: string; name: string; scopes: string[] }>> =>
    sql(`SELECT id::text, name, scopes FROM connections WHERE organisation_id = $1 AND scopes @> $2 ORDER BY id`, [organisationId, SCIM_SCOPES]);

  /** Checks the page at desktop width and at 390 px (no wider than the screen there), then goes back to desktop. */
  async function bothWidths(name: string): Promise<void> {
    await visitCheck(page, name);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await visitCheck(page, `${name}-390`);
    await page.setViewportSize({ width: 1280, height: 860 });
  }

  it('shows the configured SCIM base URL and the Okta and Entra ID steps, from the navigation, to a manager', async () => {
    await signIn(page, api, manager.personId);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'SCIM provisioning' }).click();
    expect(page.url()).toBe(`${api.url}/console/scim`);
    expect(await page.textContent('h1')).toBe('SCIM provisioning');
    expect(await page.getByRole('link', { name: 'SCIM provisioning' }).getAttribute('aria-current')).toBe('page');
    expect((await page.textContent('#scim-base-url'))?.trim()).toBe(`${api.url}/scim/v2`);

    // The steps are ordered lists, one per identity provider, with the settings the service takes.
    const okta = page.locator('section:has(h2#okta) ol.steps > li');
    const entra = page.locator('section:has(h2#entra) ol.steps > li');
    expect(await okta.count()).toBeGreaterThanOrEqual(6);
    expect(await entra.count()).toBeGreaterThanOrEqual(6);
    const oktaText = (await page.locator('section:has(h2#okta)').textContent()) ?? '';
    for (const words of [`SCIM connector base URL: ${api.url}/scim/v2`, 'Unique identifier field for users: userName', 'Push Groups', 'HTTP Header', 'Email'])
      expect(oktaText).toContain(words);
    const entraText = (await page.locator('section:has(h2#entra)').textContent()) ?? '';
    for (const words of [
      `Tenant URL: ${api.url}/scim/v2`,
      'Secret Token',
      'userName ← userPrincipalName',
      'mail',
      'Switch([IsSoftDeleted], , "False", "True", "True", "False")',
      'members ← members',
      'Provision on demand',
    ])
      expect(entraText).toContain(words);

    // The copy button puts the base URL on the clipboard.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.url });
    await page.getByRole('button', { name: 'Copy the SCIM base URL' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(`${api.url}/scim/v2`);
    await bothWidths('scim-setup');

    // The page's links lead to each identity provider's steps.
    await page.getByRole('navigation', { name: 'On this page' }).getByRole('link', { name: 'Microsoft Entra ID' }).click();
    expect(page.url()).toBe(`${api.url}/console/scim#entra`);

    // The base URL is the configured one, never one made from the Host the request names.
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const forgedHost = await api.http().get('/console/scim').set({ cookie, host: 'evil.example' });
    expect(forgedHost.status).toBe(200);
    expect(forgedHost.text.replace(/<[^>]*>/g, '')).toContain(`${api.url}/scim/v2`); // the address is split into pieces that wrap
    expect(forgedHost.text).not.toContain('evil.example');

    // The page only shows and the set-up only takes a form: other methods answer the console's 405 page.
    const wrongMethod = await api.http().delete('/console/scim').set({ cookie });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
    const setupByGet = await api.http().get('/console/scim/setup').set({ cookie });
    expect(setupByGet.status).toBe(405);
    expect(setupByGet.headers.allow).toBe('POST');
  });

  it('sets up provisioning: a connection with exactly the SCIM scopes, its key shown once, answering SCIM and nothing else', async () => {
    await signIn(page, api, manager.personId);
    await page.goto(`${api.url}/console/scim`);
    expect(await main()).toContain('None yet');
    const before = await scimConnections(t.organisationId);

    await page.getByRole('radio', { name: 'Okta' }).check();
    await submit(page, 'Set up provisioning');
    expect(page.url()).toMatch(/\/console\/reveal\/[0-9a-f-]{36}$/);
    const revealUrl = page.url();
    expect(await page.textContent('h1')).toBe('The key for Okta provisioning');
    const key = ((await page.textContent('#new-key')) ?? '').trim();
    expect(key.length).toBeGreaterThan(20);
    expect(await main()).toContain('SCIM base URL');
    expect(await main()).toContain(`${api.url}/scim/v2`);
    expect(await main()).toContain('Authorization Bearer token');
    expect(await page.textContent('#curl-line')).toContain(`Authorization: Bearer ${key}`);
    expect(await page.textContent('#curl-line')).toContain(`${api.url}/scim/v2/Users?count=1`);
    await bothWidths('scim-key-reveal');

    // In the database: one new connection of this organisation, holding exactly the four scopes, with one live key.
    const after = await scimConnections(t.organisationId);
    expect(after.length).toBe(before.length + 1);
    const made = after[after.length - 1];
    expect(made.name).toBe('Okta provisioning');
    expect([...made.scopes].sort()).toEqual(SCIM_SCOPES);
    const keys = await sql(`SELECT last_four FROM api_keys WHERE connection_id = $1 AND revoked_at IS NULL`, [made.id]);
    expect(keys).toEqual([{ last_four: key.slice(-4) }]);

    // Over the API: the key reads SCIM users and groups, and is refused what the four scopes do not hold.
    const auth = { Authorization: `Bearer ${key}` };
    const users = await api.http().get('/scim/v2/Users').set(auth);
    expect(users.status).toBe(200);
    expect(users.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
    expect((await api.http().get('/scim/v2/Groups').set(auth)).status).toBe(200);
    const me = await api.http().get('/v1/me').set(auth);
    expect(me.status).toBe(200);
    expect([...(me.body.data.connection?.scopes ?? me.body.data.scopes)].sort()).toEqual(SCIM_SCOPES);
    const cases = await api.http().get('/v1/cases').set(auth);
    expect(cases.status).toBe(403);
    expect(cases.body.error.code).toBe('scope_missing');

    // Shown once: reloading and coming back show the "no longer shown" page, and make nothing.
    await page.reload();
    expect(page.url()).toBe(revealUrl);
    expect(await page.textContent('h1')).toBe('This secret is no longer shown');
    expect(await page.content()).not.toContain(key);
    await page.goto(revealUrl);
    expect(await page.content()).not.toContain(key);
    expect((await scimConnections(t.organisationId)).length).toBe(after.length);

    // The SCIM page lists it, linked to its page; the organisation's other connection is not listed.
    await page.goto(`${api.url}/console/scim`);
    const listed = page.getByRole('table').getByRole('link', { name: 'Okta provisioning' });
    expect(await listed.getAttribute('href')).toBe(`/console/connections/${made.id}`);
    expect(await page.getByRole('table').textContent()).not.toContain('Test connection');
    await bothWidths('scim-setup-listed');
    await listed.click();
    expect(await page.textContent('h1')).toBe('Okta provisioning');
  });

  it('lets an owner set up Entra ID under a name of their own, and goes back to the Entra ID steps', async () => {
    await signIn(page, api, owner.personId);
    await page.getByRole('link', { name: 'SCIM provisioning' }).click();
    await page.getByRole('radio', { name: 'Microsoft Entra ID' }).check();
    await page.getByLabel('Name of the connection (optional)').fill('Entra (staff tenant)');
    await submit(page, 'Set up provisioning');
    expect(await page.textContent('h1')).toBe('The key for Entra (staff tenant)');
    expect(await main()).toContain('Secret Token');
    const key = ((await page.textContent('#new-key')) ?? '').trim();
    const made = (await scimConnections(t.organisationId)).find((c) => c.name === 'Entra (staff tenant)');
    expect([...made!.scopes].sort()).toEqual(SCIM_SCOPES);
    expect((await api.http().get('/scim/v2/Users').set('Authorization', `Bearer ${key}`)).status).toBe(200);

    await page.getByRole('link', { name: 'I have copied it: back to the Microsoft Entra ID steps' }).click();
    expect(page.url()).toBe(`${api.url}/console/scim#entra`);
  });

  it('refuses a set-up without an identity provider next to the field, and makes nothing', async () => {
    await signIn(page, api, manager.personId);
    await page.goto(`${api.url}/console/scim`);
    const before = (await scimConnections(t.organisationId)).length;
    await page.getByLabel('Name of the connection (optional)').fill('Kept as typed');
    await submit(page, 'Set up provisioning');
    expect(page.url()).toBe(`${api.url}/console/scim/setup`);
    expect(await page.locator('#provider-error').textContent()).toContain('Choose the identity provider you are setting up.');
    expect(await page.getByLabel('Name of the connection (optional)').inputValue()).toBe('Kept as typed');
    await bothWidths('scim-setup-refused');

    // A tampered form: an identity provider the page does not offer.
    const csrf = await page.locator('form[action="/console/scim/setup"] input[name=_csrf]').inputValue();
    const status = await page.evaluate(
      async ({ csrf }) => (await fetch('/console/scim/setup', { method: 'POST', body: new URLSearchParams({ _csrf: csrf, provider: 'toString' }) })).status,
      { csrf },
    );
    expect(status).toBe(422);
    expect((await scimConnections(t.organisationId)).length).toBe(before);
  });

  it('is refused to a person without integrations.manage or organisation.own, and to a form from another site (403 page)', async () => {
    // A person whose group holds neither permission is signed out on the next load and never sees the page.
    const person = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Leaving Soon');
    await signIn(page, api, person.personId);
    await sql(`UPDATE groups SET permissions = '{people.manage}' WHERE id = $1`, [person.groupId]);
    await page.goto(`${api.url}/console/scim`);
    expect(page.url()).toBe(`${api.url}/console/sign-in?ended=no_access`);
    expect(await main()).not.toContain('SCIM base URL');

    // A signed-in manager's session, posted from another site: the 403 page, and nothing made.
    await context.clearCookies();
    await signIn(page, api, manager.personId);
    await page.goto(`${api.url}/console/scim`);
    const csrf = await page.locator('form[action="/console/scim/setup"] input[name=_csrf]').inputValue();
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const before = (await scimConnections(t.organisationId)).length;
    const foreign = await api
      .http()
      .post('/console/scim/setup')
      .set({ cookie, origin: 'https://evil.example' })
      .type('form')
      .send({ _csrf: csrf, provider: 'okta' });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('This form was sent from another site');
    const noToken = await api.http().post('/console/scim/setup').set({ cookie, origin: api.url }).type('form').send({ provider: 'okta' });
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain('This form has expired');
    expect((await scimConnections(t.organisationId)).length).toBe(before);
  });

  it('stays readable without the set-up while the data policy is not accepted, and refuses a set-up then', async () => {
    const other = await makeTenant(api.app, ['cases:read'], 'SCIM policy org');
    const otherManager = await makeConsolePerson(api.app, other.organisationId, ['integrations.manage']);
    await signIn(page, api, otherManager.personId);
    await page.goto(`${api.url}/console/scim`);
    const csrf = await page.locator('form[action="/console/scim/setup"] input[name=_csrf]').inputValue();
    await api.app.get(OrganisationsService).setPolicy(other.organisationId, false);
    try {
      await page.reload();
      expect(await page.textContent('body')).toContain('has not accepted the current integrations data policy');
      expect(await page.getByRole('button', { name: 'Set up provisioning' }).count()).toBe(0);
      expect((await page.textContent('#scim-base-url'))?.trim()).toBe(`${api.url}/scim/v2`);
      await visitCheck(page, 'scim-setup-module-off');
      const status = await page.evaluate(
        async ({ csrf }) => (await fetch('/console/scim/setup', { method: 'POST', body: new URLSearchParams({ _csrf: csrf, provider: 'okta' }) })).status,
        { csrf },
      );
      expect(status).toBe(403);
      expect(await scimConnections(other.organisationId)).toEqual([]);
    } finally {
      await api.app.get(OrganisationsService).setPolicy(other.organisationId, true);
    }
  });
});
