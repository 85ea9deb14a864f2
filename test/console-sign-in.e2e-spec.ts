import { ConsoleAccessService } from '@web/console';
import { OrganisationsService } from '@features/organisations';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, newContext, signIn, submit, useBrowser, visitCheck } from './support/browser';
import { until } from './support/until';

jest.setTimeout(60_000);

/**
 * Signing in to the Integrations section in a real Chromium: the mailed link, the session cookie,
 * sign-out, who is let in and who is not, CSRF, Origin, the allow-list and the security headers.
 */
describe('Integrations section: sign-in and sessions (browser)', () => {
  const { api, mail } = useApi({ ownAddress: true, mail: true });
  const { browser, context, page } = useBrowser();
  let t: Tenant;
  let manager: ConsolePerson;

  beforeAll(async () => {
    t = await makeTenant(api.app);
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Ada Lovelace');
  });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> => api.app.get(DataSource).query(text, params);
  const sessionCookie = async () => (await context.cookies()).find((c) => c.name === '__Host-ia-console');

  it('signs in from the link in the mail, with a __Host- cookie, and lands on the connections', async () => {
    await page.goto(`${api.url}/console`);
    expect(page.url()).toBe(`${api.url}/console/sign-in`);
    await visitCheck(page, 'sign-in');

    await page.getByLabel('Work email address').fill(manager.email.toUpperCase());
    await submit(page, 'Mail me a sign-in link');
    expect(await page.textContent('h1')).toBe('Check your mail');
    await visitCheck(page, 'sign-in-sent');

    const sent = await until(async () => mail.mails.find((m) => m.to.includes(manager.email.toLowerCase())), 'the sign-in mail');
    const link = /https:\/\/\S+\/console\/sign-in\/link\?token=[A-Za-z0-9_-]+/.exec(sent.text)?.[0];
    expect(link).toBeDefined();
    expect(link!.startsWith(`${api.url}/`)).toBe(true);

    await page.goto(link!);
    expect(await page.textContent('h1')).toBe('Sign in to Integrations');
    await visitCheck(page, 'sign-in-link');
    expect(await sessionCookie()).toBeUndefined(); // opening the link alone signs nobody in (mail scanners)
    await submit(page, 'Sign in');
    expect(page.url()).toBe(`${api.url}/console`);
    expect(await page.textContent('h1')).toBe('Connections');
    expect(await page.textContent('body')).toContain('Test connection');
    await visitCheck(page, 'connections');

    const cookie = await sessionCookie();
    expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie!.domain).toBe('127.0.0.1'); // host-only: no Domain attribute

    // The link worked once.
    await page.goto(link!);
    expect(await page.textContent('h1')).toBe('This sign-in link cannot be used');
  });

  it('answers an unknown address, and one without the permission, with the same words and mails nothing', async () => {
    const outsider = await makeConsolePerson(api.app, t.organisationId, ['people.manage'], 'Not A Manager');
    const before = mail.mails.length;
    const answers: string[] = [];
    for (const email of ['nobody.at.all@console-test.example.org', outsider.email]) {
      await page.goto(`${api.url}/console/sign-in`);
      await page.getByLabel('Work email address').fill(email);
      await submit(page, 'Mail me a sign-in link');
      answers.push((await page.textContent('main'))!.replace(email, 'ADDRESS'));
    }
    expect(answers[0]).toBe(answers[1]);
    await new Promise((r) => setTimeout(r, 500));
    expect(mail.mails.length).toBe(before);
    await expect(api.app.get(ConsoleAccessService).issueLink(outsider.personId, 'handover')).rejects.toThrow(/may not use the Integrations section/);
  });

  it('keeps a refused address in the form and says what is wrong next to the field', async () => {
    await page.goto(`${api.url}/console/sign-in`);
    await page.getByLabel('Work email address').fill('not-an-address');
    await submit(page, 'Mail me a sign-in link');
    expect(await page.inputValue('#email')).toBe('not-an-address');
    expect(await page.textContent('#email-error')).toContain('Enter an email address such as name@example.com.');
    expect(await page.getAttribute('#email', 'aria-describedby')).toBe('email-error');
    // Before any sign-in too, the focus moves to the summary of what went wrong; its link leads to the field.
    expect(await page.evaluate('document.activeElement.id')).toBe('error-summary');
    expect(await page.locator('#error-summary a').allTextContents()).toEqual(['Enter an email address such as name@example.com.']);
    await page.locator('#error-summary a').click();
    expect(await page.evaluate('document.activeElement.id')).toBe('email');
    await visitCheck(page, 'sign-in-error');
  });

  it('signs out everywhere: the old cookie no longer opens a page', async () => {
    await signIn(page, api, manager.personId);
    const old = (await sessionCookie())!;
    await submit(page, 'Sign out');
    expect(page.url()).toMatch(/\/console\/sign-in\?ended=signed_out$/);
    expect(await page.textContent('main')).toContain('You have signed out.');
    const replay = await newContext(browser);
    await replay.addCookies([{ ...old }]);
    const other = await replay.newPage();
    await other.goto(`${api.url}/console`);
    expect(other.url()).toContain('/console/sign-in');
    await replay.close();
  });

  it('loses the session on the next load when the person is disabled, or their group loses the permission', async () => {
    for (const cut of [
      (p: ConsolePerson) => sql(`UPDATE people SET disabled = true WHERE id = $1`, [p.personId]),
      (p: ConsolePerson) => sql(`UPDATE groups SET permissions = '{people.manage}' WHERE id = $1`, [p.groupId]),
      (p: ConsolePerson) => sql(`UPDATE people SET organisation_id = NULL, group_id = NULL WHERE id = $1`, [p.personId]),
    ]) {
      const person = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage']);
      await context.clearCookies();
      await signIn(page, api, person.personId);
      await cut(person);
      await page.goto(`${api.url}/console`);
      expect(page.url()).toBe(`${api.url}/console/sign-in?ended=no_access`);
      expect(await page.textContent('main')).toContain('can no longer manage');
    }
  });

  it('lets organisation.own in too, and ends idle (30 min) and old (12 h) sessions', async () => {
    const owner = await makeConsolePerson(api.app, t.organisationId, ['organisation.own']);
    await signIn(page, api, owner.personId);
    await sql(`UPDATE console_sessions SET last_seen_at = now() - interval '31 minutes' WHERE person_id = $1 AND ended_at IS NULL`, [owner.personId]);
    await page.goto(`${api.url}/console`);
    expect(page.url()).toBe(`${api.url}/console/sign-in?ended=idle`);

    await context.clearCookies();
    await signIn(page, api, owner.personId);
    await sql(`UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE person_id = $1 AND ended_at IS NULL`, [owner.personId]);
    await page.goto(`${api.url}/console`);
    expect(page.url()).toBe(`${api.url}/console/sign-in?ended=expired`);
  });

  it('refuses a state-changing request without the CSRF token, or from another origin', async () => {
    await signIn(page, api, manager.personId);
    const cookie = (await sessionCookie())!;
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${api.url}/console/sign-out`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${cookie.name}=${cookie.value}`, ...headers },
        body,
      });
    const noToken = await post({ origin: api.url }, '');
    expect(noToken.status).toBe(403);
    expect(await noToken.text()).toContain('This form has expired');
    const csrf = await page.getAttribute('input[name="_csrf"]', 'value');
    const foreign = await post({ origin: 'https://evil.example' }, `_csrf=${encodeURIComponent(csrf!)}`);
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain('sent from another site');
    const noOrigin = await post({}, `_csrf=${encodeURIComponent(csrf!)}`);
    expect(noOrigin.status).toBe(403);
    // Origin: null (what a no-referrer page sends) passes only with the browser's Sec-Fetch-Site: same-origin.
    const nullCrossSite = await post({ origin: 'null', 'sec-fetch-site': 'cross-site' }, `_csrf=${encodeURIComponent(csrf!)}`);
    expect(nullCrossSite.status).toBe(403);
    // Still signed in: none of those did anything.
    await page.goto(`${api.url}/console`);
    expect(await page.textContent('h1')).toBe('Connections');
    const good = await post({ origin: api.url }, `_csrf=${encodeURIComponent(csrf!)}`);
    expect(good.status).toBe(303);
  });

  it('holds the console to the organisation’s address allow-list', async () => {
    await signIn(page, api, manager.personId);
    await api.app.get(OrganisationsService).setAllowlist(t.organisationId, ['10.20.0.0/16']);
    try {
      await page.goto(`${api.url}/console`);
      expect(await page.textContent('h1')).toBe('Not from this network');
      await visitCheck(page, 'not-from-this-network');
      const fresh = await newContext(browser);
      const other = await fresh.newPage();
      const { token } = await api.app.get(ConsoleAccessService).issueLink(manager.personId, 'handover');
      await other.goto(`${api.url}/console/sign-in/link?token=${token}`);
      await submit(other, 'Sign in');
      expect(await other.textContent('h1')).toBe('Not from this network');
      expect((await fresh.cookies()).find((c) => c.name === '__Host-ia-console')).toBeUndefined();
      await fresh.close();
      await api.app.get(OrganisationsService).setAllowlist(t.organisationId, ['127.0.0.0/8']);
      await page.goto(`${api.url}/console`);
      expect(await page.textContent('h1')).toBe('Connections');
    } finally {
      await api.app.get(OrganisationsService).setAllowlist(t.organisationId, []);
    }
  });

  it('sends a strict Content-Security-Policy, no Referer and no caching on every page', async () => {
    for (const path of ['/console/sign-in', '/console/sign-in/link?token=x']) {
      const res = await fetch(`${api.url}${path}`);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    await signIn(page, api, manager.personId);
    const res = await page.goto(`${api.url}/console`);
    expect(res!.headers()['cache-control']).toBe('no-store');
    expect(res!.headers()['content-security-policy']).toContain("default-src 'none'");
  });

  it('throttles sign-in mails per address', async () => {
    const email = `throttled.${Date.now()}@console-test.example.org`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      await page.goto(`${api.url}/console/sign-in`);
      await page.getByLabel('Work email address').fill(email);
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${api.url}/console/sign-in` && r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Mail me a sign-in link' }).click(),
      ]);
      statuses.push(res.status());
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await page.textContent('main')).toContain('Too many sign-in links');
  });

  it('says plainly when the module is off, shows the pages and refuses changes', async () => {
    await api.app.get(OrganisationsService).setModule(t.organisationId, false);
    try {
      await signIn(page, api, manager.personId);
      expect(await page.textContent('.banner')).toContain('Integrations are switched off');
      await visitCheck(page, 'module-off');
      const csrf = await page.getAttribute('input[name="_csrf"]', 'value');
      // sign-out still works while the module is off
      await submit(page, 'Sign out');
      expect(page.url()).toMatch(/ended=signed_out/);
      expect(csrf).toBeTruthy();
    } finally {
      await api.app.get(OrganisationsService).setModule(t.organisationId, true);
    }
  });
});
