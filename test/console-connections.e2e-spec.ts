import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { OrganisationsService } from '@features/organisations';
import { makeTenant, startApiAtOwnAddress, Tenant, useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, newContext, PHONE, signIn, submit, useBrowser, visitCheck } from './support/browser';

jest.setTimeout(90_000);

/**
 * The Integrations pages a manager uses to serve a partner, driven in a real Chromium against the
 * real api: making a connection, a key shown once, the key calling the API, the third key refused,
 * revoking a key and a connection, scopes, and the data policy.
 */
describe('Integrations section: connections, keys, scopes and the data policy (browser)', () => {
  // Loopback is a trusted proxy, so one test can stand for a throttled client address without throttling the others.
  const { api } = useApi({ ownAddress: true, env: { TRUSTED_PROXIES: '127.0.0.1/32,::1/128' } });
  const { browser, context, page } = useBrowser();
  let t: Tenant;
  let manager: ConsolePerson;
  let owner: ConsolePerson;

  beforeAll(async () => {
    t = await makeTenant(api.app, ['cases:read'], 'Console org');
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Ada Lovelace');
    owner = await makeConsolePerson(api.app, t.organisationId, ['organisation.own'], 'Grace Hopper');
  });

  const me = (key: string) => api.http().get('/v1/me').set('Authorization', `Bearer ${key}`);
  const main = async () => (await page.textContent('main')) ?? '';

  /** Makes a connection through its form and returns its page's address. */
  async function makeConnection(name: string, scopes: string[]): Promise<string> {
    await page.goto(`${api.url}/console`);
    await page.getByRole('link', { name: 'Make a connection' }).click();
    await page.getByLabel('Name').fill(name);
    for (const scope of scopes) await page.getByRole('checkbox', { name: scope }).check();
    await submit(page, 'Make the connection');
    return page.url().replace(/\?.*$/, '');
  }

  async function makeKey(): Promise<string> {
    await submit(page, 'Make a key');
    return ((await page.textContent('#new-key')) ?? '').trim();
  }

  /** Runs the page's curl line in a shell, as a partner pasting it would (the api answers from this process, so not synchronously); answers what curl printed. */
  const runCurl = async (line: string, env: Record<string, string> = {}) =>
    JSON.parse(
      (
        await promisify(execFile)('sh', ['-c', `${line} --silent --show-error --max-time 20`], {
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '', ...env },
        })
      ).stdout,
    );

  /** The curl line's address: on one line of its own at 390 px (never broken inside), and its text. */
  const curlAddress = async () => {
    await page.setViewportSize(PHONE);
    const address = page.locator('#curl-line .nowrap');
    const lines = await address.evaluate((el) => (el as unknown as { getClientRects: () => { length: number } }).getClientRects().length);
    await page.setViewportSize({ width: 1280, height: 860 });
    return { text: await address.textContent(), lines };
  };

  it("refuses an empty or forged cursor on a webhook's delivery log as the REST lists do (400), not as the first page", async () => {
    const [hook] = await api.app
      .get(DataSource)
      .query(
        `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, 'https://hooks.example.com/cursor', '{conversation.ended}', 'whsec_x') RETURNING id`,
        [t.organisationId, t.connectionId],
      );
    await signIn(page, api, manager.personId);
    const deliveries = `${api.url}/console/connections/${t.connectionId}/webhooks/${hook.id}/deliveries`;
    expect((await page.goto(deliveries))?.status()).toBe(200);
    for (const cursor of ['', 'AAAA']) {
      const refused = await page.goto(`${deliveries}?cursor=${cursor}`);
      expect(refused?.status()).toBe(400);
      expect(await main()).toContain('is not a cursor this API issued');
    }
  });

  it('makes a connection, shows a new key once, and the key calls the API with the chosen scopes', async () => {
    await signIn(page, api, manager.personId);
    await page.getByRole('link', { name: 'Make a connection' }).click();
    await visitCheck(page, 'connection-new');
    await page.getByLabel('Name').fill('Case management (Acme)');
    await page.getByRole('checkbox', { name: 'cases:read' }).check();
    await page.getByRole('checkbox', { name: 'users:read' }).check();
    await submit(page, 'Make the connection');
    expect(page.url()).toMatch(/\/console\/connections\/\d+\?done=created$/);
    expect(await page.textContent('h1')).toBe('Case management (Acme)');
    expect(await main()).toContain('The connection was made');
    expect(await main()).toContain('This connection has no keys yet.');
    await visitCheck(page, 'connection-empty');
    const connectionPage = page.url().replace(/\?.*$/, '');

    await submit(page, 'Make a key');
    expect(page.url()).toMatch(/\/console\/reveal\/[0-9a-f-]{36}$/);
    const revealUrl = page.url();
    const key = ((await page.textContent('#new-key')) ?? '').trim();
    expect(key.length).toBeGreaterThan(20);
    const curl = ((await page.textContent('#curl-line')) ?? '').trim();
    // The api serves its self-signed certificate here (no TLS_CERT_FILE): the line says -k, and says why.
    expect(curl).toBe(`curl -k -H 'Authorization: Bearer ${key}' '${api.url}/v1/me'`);
    expect(await page.textContent('#curl-k')).toContain('self-signed certificate');
    expect(await curlAddress()).toEqual({ text: `${api.url}/v1/me`, lines: 1 });
    await visitCheck(page, 'key-reveal');

    // The copy button is the script's: it puts the key on the clipboard.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.url });
    await page.getByRole('button', { name: 'Copy the key' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

    // Reloading, going back and opening the address again never show it again and make nothing.
    await page.reload();
    expect(page.url()).toBe(revealUrl);
    expect(await page.textContent('h1')).toBe('This secret is no longer shown');
    expect(await main()).not.toContain(key);
    await visitCheck(page, 'key-reveal-gone');
    await page.goBack();
    expect(await main()).not.toContain(key);
    await page.goto(revealUrl);
    expect(await main()).not.toContain(key);

    await page.goto(connectionPage);
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(`…${key.slice(-4)}`);
    expect(await rows.first().textContent()).toContain('never');

    const res = await me(key);
    expect(res.status).toBe(200);
    expect(res.body.data.connection?.scopes ?? res.body.data.scopes).toEqual(['cases:read', 'users:read']);

    // The page shows the key's last use (to the minute) once it has called.
    await page.reload();
    expect(await rows.first().textContent()).not.toContain('never');
    await visitCheck(page, 'connection');

    // Pasted into a shell, the page's curl line works as it stands.
    expect((await runCurl(curl)).data).toMatchObject({ scopes: ['cases:read', 'users:read'] });
  });

  it('offers no third live key (the button disabled, the reason beside it), refuses one made anyway, and a revoked key is refused by the API at once', async () => {
    await signIn(page, api, manager.personId);
    const connectionPage = await makeConnection('Two keys at most', ['cases:read']);
    const first = await makeKey();
    await page.goto(connectionPage);
    const second = await makeKey();
    await page.goto(connectionPage);
    const button = page.getByRole('button', { name: 'Make a key', exact: true });
    expect(await button.isDisabled()).toBe(true);
    expect(await button.getAttribute('aria-describedby')).toBe('key-limit');
    expect(await page.textContent('#key-limit')).toBe(
      'This connection has 2 live keys, the most it can hold: revoke one (for example the one your partner has replaced) to make another.',
    );
    await visitCheck(page, 'connection-key-limit');

    // A page opened before the second key was made still offers the button: the server refuses, and the focus goes to what went wrong.
    await button.evaluate((el) => ((el as unknown as { disabled: boolean }).disabled = false));
    await submit(page, 'Make a key');
    expect(page.url()).toBe(`${connectionPage}/keys`);
    expect(await page.textContent('#key-error')).toContain('already has 2 live keys, the most it can hold. Revoke one first');
    expect(await page.getByRole('alert').textContent()).toContain('There is a problem');
    expect(await page.evaluate('document.activeElement.id')).toBe('error-summary');
    expect((await me(first)).status).toBe(200);
    expect(await page.locator('table tbody tr', { hasText: 'live' }).count()).toBe(2);
    await visitCheck(page, 'connection-third-key-refused');

    expect((await me(first)).status).toBe(200);
    await page.goto(connectionPage);
    await page.getByRole('link', { name: `Revoke the key ending in ${first.slice(-4)}` }).click();
    expect(await page.textContent('h1')).toBe(`Revoke the key ending in ${first.slice(-4)}?`);
    expect(await main()).toContain('This cannot be undone');
    await visitCheck(page, 'key-revoke-confirm');
    await submit(page, 'Revoke the key');
    expect(await main()).toContain('The key was revoked');
    expect(await page.locator('table tbody tr', { hasText: first.slice(-4) }).textContent()).toContain('revoked');

    const refused = await me(first);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorised');
    expect((await me(second)).status).toBe(200);

    // With one key revoked, a new one can be made.
    await page.goto(connectionPage);
    expect(await page.getByRole('button', { name: 'Make a key', exact: true }).isDisabled()).toBe(false);
    expect(await page.locator('#key-limit').count()).toBe(0);
    expect((await makeKey()).length).toBeGreaterThan(20);
  });

  it('keeps what was typed when a form is refused, and says what is wrong next to the field', async () => {
    await signIn(page, api, manager.personId);
    await page.goto(`${api.url}/console/connections/new`);
    await page.getByLabel('Name').fill('   ');
    await page.getByRole('checkbox', { name: 'users:write' }).check();
    await submit(page, 'Make the connection');
    expect(page.url()).toBe(`${api.url}/console/connections`);
    const name = page.getByLabel('Name');
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#name-error').textContent()).toContain('Name must not be empty.');
    expect(await page.getByRole('checkbox', { name: 'users:write' }).isChecked()).toBe(true);
    // The focus is on the summary of what went wrong, whose link leads to the field.
    expect(await page.evaluate('document.activeElement.id')).toBe('error-summary');
    const summaryLink = page.locator('#error-summary a');
    expect(await summaryLink.allTextContents()).toEqual(['Name must not be empty.']);
    await summaryLink.click();
    expect(await page.evaluate('document.activeElement.id')).toBe('name');
    await visitCheck(page, 'connection-new-refused');

    // An unknown scope (a tampered form) is refused by the domain's rule, in words, next to the scopes.
    const conn = await makeConnection('Scopes', ['cases:read']);
    const csrf = await page.locator('form[action$="/scopes"] input[name=_csrf]').inputValue();
    const answer = await page.evaluate(
      async ({ action, csrf }) => {
        const r = await fetch(action, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, scopes: 'cases:delete' }) });
        return { status: r.status, text: await r.text() };
      },
      { action: `${conn}/scopes`, csrf },
    );
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('Scopes: unknown scope(s): cases:delete.');
  });

  it('leaves -k out of the curl line when the api serves a certificate it was given (TLS_CERT_FILE)', async () => {
    const tls = join(api.config.dataDir, 'tls');
    const certified = await startApiAtOwnAddress({ TLS_CERT_FILE: join(tls, 'localhost.crt'), TLS_KEY_FILE: join(tls, 'localhost.key') });
    const given = certified.url;
    try {
      await signIn(page, certified, manager.personId);
      await page.goto(`${given}/console/connections/${t.connectionId}`);
      await submit(page, 'Make a key');
      const key = ((await page.textContent('#new-key')) ?? '').trim();
      const curl = ((await page.textContent('#curl-line')) ?? '').trim();
      expect(curl).toBe(`curl -H 'Authorization: Bearer ${key}' '${given}/v1/me'`);
      expect(await page.locator('#curl-k').count()).toBe(0);
      // With the certificate trusted, as a real one is, the line works without -k.
      expect((await runCurl(curl, { CURL_CA_BUNDLE: join(tls, 'localhost.crt') })).data).toMatchObject({ scopes: ['cases:read'] });
      await visitCheck(page, 'key-reveal-given-certificate');
    } finally {
      await certified.close();
    }
  });

  it('changes a connection’s scopes, effective on the key’s next call', async () => {
    await signIn(page, api, manager.personId);
    const connectionPage = await makeConnection('Scope change', ['cases:read']);
    const key = await makeKey();
    expect((await api.http().get('/v1/cases').set('Authorization', `Bearer ${key}`)).status).toBe(200);

    await page.goto(connectionPage);
    await page.getByRole('checkbox', { name: 'cases:read' }).uncheck();
    await page.getByRole('checkbox', { name: 'groups:read' }).check();
    await submit(page, 'Save the scopes');
    expect(await main()).toContain('The scopes were saved');
    expect(await page.getByRole('checkbox', { name: 'groups:read' }).isChecked()).toBe(true);

    const cases = await api.http().get('/v1/cases').set('Authorization', `Bearer ${key}`);
    expect(cases.status).toBe(403);
    expect(cases.body.error.code).toBe('scope_missing');
    expect((await api.http().get('/v1/groups').set('Authorization', `Bearer ${key}`)).status).toBe(200);
  });

  it('revokes a connection after a confirmation that says it is immediate and permanent', async () => {
    await signIn(page, api, manager.personId);
    const connectionPage = await makeConnection('Short-lived partner', ['cases:read']);
    const key = await makeKey();
    await page.goto(connectionPage);
    await page.getByRole('link', { name: 'Revoke Short-lived partner…' }).click();
    expect(await main()).toContain('immediate and permanent');
    expect(await main()).toContain('Its webhooks stop');
    await visitCheck(page, 'connection-revoke-confirm');
    // Cancel changes nothing.
    await page.getByRole('link', { name: 'Cancel' }).click();
    expect((await me(key)).status).toBe(200);
    await page.getByRole('link', { name: 'Revoke Short-lived partner…' }).click();
    await submit(page, 'Revoke the connection');
    expect(page.url()).toBe(`${api.url}/console?done=connection-revoked`);
    expect(await page.locator('table tbody tr', { hasText: 'Short-lived partner' }).textContent()).toContain('revoked');
    expect((await me(key)).status).toBe(401);
    // Its page is read-only now.
    await page.goto(connectionPage);
    expect(await page.getByRole('button', { name: 'Make a key' }).count()).toBe(0);
  });

  it('is usable with the keyboard alone: make a key without a mouse', async () => {
    await signIn(page, api, manager.personId);
    const connectionPage = await makeConnection('Keyboard', ['cases:read']);
    await page.goto(connectionPage);
    // The first Tab reaches the skip link, which is visible when focused.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Skip to content');
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = String(await page.evaluate('document.activeElement && document.activeElement.textContent')).trim() === 'Make a key';
    }
    expect(reached).toBe(true);
    // Focus is visible: the focused button draws an outline.
    expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).not.toBe('none');
    await Promise.all([page.waitForEvent('framenavigated'), page.keyboard.press('Enter')]);
    await page.waitForLoadState('load');
    expect(await page.textContent('h1')).toBe('Your new key');
  });

  it('lets an owner withdraw and accept the data policy; a manager without organisation.own cannot', async () => {
    await signIn(page, api, manager.personId);
    expect(await page.getByRole('link', { name: 'Data policy' }).count()).toBe(0);
    await page.goto(`${api.url}/console/policy`);
    expect(await page.textContent('h1')).toBe('Only the organisation’s owners can do this');

    const ownerContext = await newContext(browser);
    const ownerPage = await ownerContext.newPage();
    try {
      await signIn(ownerPage, api, owner.personId);
      await ownerPage.getByRole('link', { name: 'Data policy' }).click();
      expect(await ownerPage.textContent('main')).toContain('accepted');
      await visitCheck(ownerPage, 'policy');
      await ownerPage.getByRole('link', { name: 'Withdraw acceptance…' }).click();
      expect(await ownerPage.textContent('main')).toContain('will answer module_off');
      await visitCheck(ownerPage, 'policy-withdraw-confirm');
      await submit(ownerPage, 'Withdraw acceptance');
      expect(await ownerPage.textContent('main')).toContain('Acceptance was withdrawn');
      expect(await ownerPage.getByRole('status').first().textContent()).toContain('has not accepted the current integrations data policy');
      await visitCheck(ownerPage, 'policy-withdrawn');

      const off = await me(t.key);
      expect(off.status).toBe(403);
      expect(off.body.error.code).toBe('module_off');

      // The manager's pages say so and offer no changes.
      await page.goto(`${api.url}/console`);
      expect(await page.textContent('body')).toContain('has not accepted the current integrations data policy');
      expect(await page.getByRole('link', { name: 'Make a connection' }).count()).toBe(0);

      // A newer published version is not accepted by the old acceptance; the owner accepts it.
      await api.app.get(OrganisationsService).publishPolicyVersion();
      await ownerPage.reload();
      await submit(ownerPage, `Accept version ${await api.app.get(OrganisationsService).currentPolicyVersion()} of the policy`);
      expect(await ownerPage.textContent('main')).toContain('is accepted');
      expect((await me(t.key)).status).toBe(200);
    } finally {
      await ownerContext.close();
    }
  });

  it('does not show or change another organisation’s connection', async () => {
    const other = await makeTenant(api.app, ['cases:read'], 'Someone else');
    await signIn(page, api, manager.personId);
    const res = await page.goto(`${api.url}/console/connections/${other.connectionId}`);
    expect(res?.status()).toBe(404);
    expect(await page.textContent('body')).not.toContain('Test connection');
    await page.goto(`${api.url}/console/connections/new`);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const answer = await page.evaluate(
      async ({ action, csrf }) => (await fetch(action, { method: 'POST', body: new URLSearchParams({ _csrf: csrf }) })).status,
      { action: `${api.url}/console/connections/${other.connectionId}/keys`, csrf },
    );
    expect(answer).toBe(404);
    expect((await me(other.key)).status).toBe(200);
  });

  it('stays reachable from an address the API throttles for refused keys, and asks for no favicon', async () => {
    const from = { 'X-Forwarded-For': '198.51.100.77' };
    const asked: string[] = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    await context.setExtraHTTPHeaders(from);
    for (let i = 0; i < 61; i++) await api.http().get('/v1/me').set(from).set('Authorization', 'Bearer svc_wrong');
    expect((await me(t.key).set(from)).status).toBe(429);

    await signIn(page, api, manager.personId);
    expect(await page.textContent('h1')).toBe('Connections');
    await page.getByRole('link', { name: 'Make a connection' }).click();
    expect(await page.textContent('h1')).toBe('Make a connection');
    expect(asked.filter((p) => !p.startsWith('/console'))).toEqual([]);
  });
});
