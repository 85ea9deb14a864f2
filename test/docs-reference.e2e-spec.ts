import type { Browser, Page } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, launchBrowser, newContext, SCREENSHOTS_DIR } from './support/browser';
import { useApi } from './support/api';

type Json = Record<string, any>;

/**
 * /docs: Redoc renders the served description, with no key and every file from this origin under
 * the page's Content-Security-Policy; every operation and every webhook event is listed; axe finds
 * no serious or critical WCAG 2.2 AA violation, at desktop width and at 390 px.
 */
describe('GET /docs (the rendered reference)', () => {
  const { api } = useApi();
  let browser: Browser;
  let doc: Json;
  beforeAll(async () => {
    browser = await launchBrowser();
    doc = (await api.http().get('/v1/openapi.json')).body;
  });
  afterAll(() => browser?.close());

  const operationIds = (): string[] =>
    Object.values(doc.paths as Json).flatMap((item: Json) =>
      Object.values(item)
        .filter((op: any) => op && typeof op === 'object' && op.responses)
        .map((op: any) => op.operationId as string),
    );
  const webhookIds = (): string[] => Object.values(doc.webhooks as Json).map((item: Json) => item.post.operationId as string);

  /** Opens /docs at `width`, noting every request that left this origin and every refusal by the CSP. */
  async function open(width: number): Promise<{ page: Page; foreign: string[]; refused: string[] }> {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.setViewportSize({ width, height: 900 });
    const foreign: string[] = [];
    const refused: string[] = [];
    const origin = new URL(api.url).origin;
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== origin) foreign.push(r.url());
    });
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    const res = await page.goto(`${api.url}/docs`);
    expect(res?.status()).toBe(200);
    // Redoc has rendered once the last operation's section is in the page.
    await page
      .locator(`[data-section-id="operation/${operationIds().at(-1)}"]`)
      .first()
      .waitFor({ state: 'attached', timeout: 60000 });
    return { page, foreign, refused };
  }

  it('answers without a key, with its own Content-Security-Policy, and serves the bundle from this origin', async () => {
    const page = await api.http().get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-eval|https?:/);
    const scripts = [...page.text.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(2);
    for (const src of scripts) {
      expect(src.startsWith('/docs/')).toBe(true);
      const js = await api.http().get(src);
      expect(js.status).toBe(200);
      expect(js.headers['content-type']).toMatch(/^text\/javascript/);
      expect(js.text).not.toContain('cdn.redoc.ly');
    }
  });

  for (const [label, width] of [
    ['desktop', 1280],
    ['390px', 390],
  ] as const) {
    it(`renders every operation and every webhook event, from this origin only, with no serious axe violation (${label})`, async () => {
      const { page, foreign, refused } = await open(width);
      for (const id of operationIds()) expect({ id, shown: await page.locator(`[data-section-id="operation/${id}"]`).count() }).toEqual({ id, shown: 1 });
      for (const id of webhookIds()) {
        // Redoc lists a webhook under its tag and under its own Webhooks section.
        expect({ id, shown: (await page.locator(`[data-section-id$="operation/${id}"]`).count()) > 0 }).toEqual({ id, shown: true });
      }
      for (const event of Object.keys(doc.webhooks)) await expect(page.getByText(event, { exact: true }).first().count()).resolves.toBeGreaterThan(0);
      expect(foreign).toEqual([]);
      expect(refused).toEqual([]);
      // The whole reference is one very long page: the picture is of the first screen.
      mkdirSync(SCREENSHOTS_DIR, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS_DIR, `docs-${label}.png`) });
      await page.locator('[data-section-id="operation/createWebhook"]').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS_DIR, `docs-${label}-operation.png`) });
      const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(
        serious.map(
          (v) =>
            `${v.id} (${v.impact}): ${v.help} ${v.nodes
              .slice(0, 3)
              .map((n) => `${n.target.join(' ')} ${n.failureSummary}`)
              .join(', ')}`,
        ),
      ).toEqual([]);
      await page.context().close();
    }, 180000);
  }
});
