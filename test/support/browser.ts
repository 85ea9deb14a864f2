import { INestApplicationContext } from '@nestjs/common';
import { ConsoleAccessService } from '@web/console';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { DataSource } from 'typeorm';

/** The Debian `chromium` package's browser (no download: playwright-core drives the one installed). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the browser tests leave a screenshot of every page they visit (not tracked by git; docs/screenshots holds chosen copies). */
export const SCREENSHOTS_DIR = resolve(__dirname, '../../test-results/screenshots');
/** The reader's time zone in the tests: times must show in it, not in UTC. */
export const READER_TIME_ZONE = 'Europe/Berlin';
/** WCAG 2.2 AA, as axe-core names its rule tags. */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // root in a container has no user namespace for Chromium's sandbox
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A fresh browser profile (no cookies) that trusts the api's self-signed certificate. */
export function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: true, timezoneId: READER_TIME_ZONE, locale: 'en-GB', viewport: { width: 1280, height: 860 } });
}

export interface BrowserRig {
  browser: Browser;
  /** The running test's own profile (no cookies from another test). */
  context: BrowserContext;
  /** The running test's page, in that profile. */
  page: Page;
}

/**
 * The browser preamble of a console spec: Chromium launched in beforeAll and closed in afterAll, a
 * fresh profile and page for each test (closed after it), registered in the calling describe. The
 * answer's members are views that always act on what the hooks made for the running test, so a
 * spec writes `const { page } = useBrowser()` once and uses `page` in every test and hook.
 */
export function useBrowser(): BrowserRig {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());
  beforeEach(async () => {
    context = await newContext(browser!);
    page = await context.newPage();
  });
  afterEach(async () => {
    await context?.close();
    context = page = undefined;
  });
  return {
    browser: liveView('the browser', () => browser),
    context: liveView('the browser context', () => context),
    page: liveView('the page', () => page),
  };
}

/** An object standing for whatever `current()` answers at the time of each use (methods bound to it). */
function liveView<T extends object>(what: string, current: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_, property) {
      const target = current();
      if (!target) throw new Error(`${what} is made in a hook of useBrowser(): use it in a test or a later hook`);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/**
 * axe-core's violations of WCAG 2.2 AA on the page as it is now. axe is evaluated through the
 * DevTools protocol, which the page's Content-Security-Policy does not govern, so the page's own
 * strict policy stays on while it is checked.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async (tags) => {
    const page = globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> }; document: unknown };
    const result = await page.axe.run(page.document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  }, WCAG_TAGS);
}

/** Fails with axe's words when the page has any WCAG 2.2 AA violation. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const violations = await axeViolations(page);
  const described = violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`).join('\n    ')}`,
  );
  expect({ page: what, violations: described }).toEqual({ page: what, violations: [] });
}

/** A full-page screenshot, saved as test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const file = join(SCREENSHOTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The phone width every page is checked at besides the desktop one. */
export const PHONE = { width: 390, height: 844 };

/** What sticks out of the viewport: its width, the page's, and the first few elements whose right edge passes it. */
const SIDEWAYS = `(() => {
  const limit = document.documentElement.clientWidth;
  // Inside a region that scrolls (or clips) sideways, sticking out is that region's business; not
  // for an absolutely placed element, which the region clips only when it is its containing block.
  const inRegion = (el) => {
    if (['absolute', 'fixed'].includes(getComputedStyle(el).position)) return false;
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible') return true;
    return false;
  };
  const wide = Array.from(document.querySelectorAll('body *'))
    .filter((el) => el.getBoundingClientRect().right > limit + 0.5 && !inRegion(el))
    .slice(0, 5)
    .map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().replace(/ +/g, '.') : ''));
  return { width: limit, scrollWidth: document.documentElement.scrollWidth, wide };
})()`;

/** Fails when the page is wider than its viewport (something neither wraps nor scrolls inside a region of its own), naming what sticks out. */
export async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const { width, scrollWidth, wide } = (await page.evaluate(SIDEWAYS)) as { width: number; scrollWidth: number; wide: string[] };
  expect({ page: what, scrollWidth: scrollWidth <= width ? 'fits' : scrollWidth, wide: scrollWidth <= width ? [] : wide }).toEqual({
    page: what,
    scrollWidth: 'fits',
    wide: [],
  });
}

/**
 * Checks the page (axe) and keeps its picture at the viewport's width, then again at 390 px (no
 * wider than the screen there, axe clean too), then puts the viewport back: what every browser
 * test does on every page it shows. The pictures are `<name>.png` and `<name>-390.png`.
 */
export async function visitCheck(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await screenshot(page, name);
  const viewport = page.viewportSize();
  if (viewport && viewport.width === PHONE.width) return;
  await page.setViewportSize(PHONE);
  try {
    await expectNoSidewaysScroll(page, `${name} at ${PHONE.width} px`);
    await expectAccessible(page, `${name} at ${PHONE.width} px`);
    await screenshot(page, `${name}-${PHONE.width}`);
  } finally {
    if (viewport) await page.setViewportSize(viewport);
  }
}

export interface ConsolePerson {
  personId: string;
  groupId: string;
  email: string;
  name: string;
}

/** A person of the organisation in a group of their own holding `permissions` (e.g. integrations.manage). */
export async function makeConsolePerson(
  app: INestApplicationContext,
  organisationId: string,
  permissions: string[],
  name = 'Ada Manager',
): Promise<ConsolePerson> {
  const ds = app.get(DataSource);
  const tag = Math.random().toString(36).slice(2, 10);
  const [group] = await ds.query(`INSERT INTO groups (organisation_id, name, permissions) VALUES ($1, $2, $3) RETURNING id`, [
    organisationId,
    `Console ${tag}`,
    permissions,
  ]);
  const email = `ada.${tag}@console-test.example.org`;
  const [person] = await ds.query(`INSERT INTO people (email, name, organisation_id, group_id, joined_at) VALUES ($1, $2, $3, $4, now()) RETURNING id`, [
    email,
    name,
    organisationId,
    group.id,
  ]);
  return { personId: String(person.id), groupId: String(group.id), email, name };
}

/** Presses a form's button by its accessible name and waits for the page the form's answer (or its redirect) loads. */
export async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('button', { name: button, exact: true }).click()]);
  await page.waitForLoadState('load');
}

/**
 * Signs the browser in as a person the way the platform hands a person over: a link, then the
 * button; `api.url` is the api's public address (useApi's `ownAddress`).
 */
export async function signIn(page: Page, api: { app: INestApplicationContext; url: string }, personId: string): Promise<void> {
  const { token } = await api.app.get(ConsoleAccessService).issueLink(personId, 'handover');
  await page.goto(`${api.url}/console/sign-in/link?token=${token}`);
  await submit(page, 'Sign in');
  if (page.url() !== `${api.url}/console`) throw new Error(`signing in ended on ${page.url()}: ${(await page.content()).slice(0, 2000)}`);
}
