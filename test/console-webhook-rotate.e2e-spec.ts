import { WebhookTls } from '@features/webhooks';
import Stripe from 'stripe';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, signIn, submit, useBrowser, visitCheck } from './support/browser';
import { WebhookReceiver } from './support/webhook-receiver';
import { retireDeliveries } from './support/webhook-stand';

jest.setTimeout(90_000);

const rand = () => Math.random().toString(36).slice(2, 10);
const stripe = new Stripe('sk_test_unused');

/**
 * A webhook's "Rotate secret" page in a real Chromium against the real api and a real HTTPS
 * receiver: the form (the current secret pasted in, the overlap chosen), a refusal with the focus
 * on its summary (a link to the field in error), and the new secret revealed once; axe at desktop
 * and at 390 px (visitCheck).
 */
describe('Integrations section: rotating a webhook’s signing secret (browser)', () => {
  const { api } = useApi({
    ownAddress: true,
    env: { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' },
    beforeClose: () => retireDeliveries(db),
    hookTimeout: 60_000,
  });
  const { page } = useBrowser();
  let receiver: WebhookReceiver;
  let db: DataSource;
  let t: Tenant;
  let manager: ConsolePerson;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api.app.get(WebhookTls).ca = receiver.cert;
    db = api.app.get(DataSource);
    t = await makeTenant(api.app, ['conversations:read', 'webhooks:manage'], 'Rotation org');
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Grace Hopper');
  }, 60_000);
  afterAll(() => receiver?.close());
  beforeEach(() => signIn(page, api, manager.personId));

  const secrets = async (id: string) => (await db.query(`SELECT secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = $1`, [id]))[0];

  it('rotates from the form: a wrong secret is refused with the focus on the field, the right one reveals the new secret once, and deliveries carry both signatures', async () => {
    const url = `https://127.0.0.1/console-rotate-${rand()}`;
    const made = await api
      .http()
      .post('/v1/webhooks')
      .set(t.auth)
      .send({ url, events: ['conversation.ended'] });
    expect(made.status).toBe(201);
    const { id, secret: old } = made.body.data as { id: string; secret: string };

    await page.goto(`${api.url}/console/connections/${t.connectionId}/webhooks`);
    await page.getByRole('link', { name: `Rotate secret of ${url}` }).click();
    expect(page.url()).toBe(`${api.url}/console/connections/${t.connectionId}/webhooks/${id}/rotate-secret`);
    expect(await page.textContent('h1')).toBe('Rotate the signing secret');
    expect(await page.getByLabel('Overlap: how long the current secret keeps signing').inputValue()).toBe('86400');
    await visitCheck(page, 'webhook-rotate');

    // A wrong secret: refused next to the field, the focus on the summary whose link leads to the field; it is not shown back, and nothing changed.
    await page.getByLabel('Current signing secret').fill(`${old}x`);
    await submit(page, 'Rotate the secret');
    expect(await page.textContent('#current_secret-error')).toContain('This is not the webhook’s current signing secret.');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('error-summary');
    expect(await page.locator('#error-summary a').getAttribute('href')).toBe('#current_secret');
    await page.locator('#error-summary a').click();
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('current_secret');
    expect(await page.getAttribute('#current_secret', 'aria-describedby')).toContain('current_secret-error');
    expect(await page.getAttribute('#current_secret', 'aria-invalid')).toBe('true');
    expect(await page.getByLabel('Current signing secret').inputValue()).toBe('');
    expect(await secrets(id)).toEqual({ secret: old, previous_secret: null, previous_secret_expires_at: null });
    await visitCheck(page, 'webhook-rotate-refused');

    // The right one, with an overlap of an hour: the new secret, once.
    await page.getByLabel('Current signing secret').fill(old);
    await page.getByLabel('Overlap: how long the current secret keeps signing').selectOption('3600');
    const before = Date.now();
    await submit(page, 'Rotate the secret');
    expect(page.url()).toMatch(/\/console\/reveal\/[0-9a-f-]{36}$/);
    expect(await page.textContent('h1')).toBe('The webhook’s new signing secret');
    const fresh = ((await page.textContent('#new-secret')) ?? '').trim();
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const stored = await secrets(id);
    expect({ secret: stored.secret, previous: stored.previous_secret }).toEqual({ secret: fresh, previous: old });
    expect(stored.previous_secret_expires_at.getTime()).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(await page.textContent('#rotation-note')).toContain('each delivery is signed with both the old and the new secret');
    await visitCheck(page, 'webhook-rotate-secret');
    await page.reload();
    expect(await page.textContent('h1')).toBe('This secret is no longer shown');
    expect((await page.textContent('main')) ?? '').not.toContain(fresh);

    // A test sent now carries both signatures: a receiver checking with either secret accepts it.
    const tested = await api.http().post(`/v1/webhooks/${id}/test`).set(t.auth);
    expect(tested.status).toBe(200);
    const [got] = await receiver.waitFor(new URL(url).pathname, 1);
    // Another organisation's webhook, or one under another connection: not found, nothing to rotate.
    const other = await makeTenant(api.app, ['conversations:read', 'webhooks:manage'], 'Other org');
    const theirs = await api
      .http()
      .post('/v1/webhooks')
      .set(other.auth)
      .send({ url: `https://127.0.0.1/console-rotate-other-${rand()}`, events: ['conversation.ended'] });
    expect(theirs.status).toBe(201);
    for (const address of [
      `/console/connections/${other.connectionId}/webhooks/${theirs.body.data.id}/rotate-secret`,
      `/console/connections/${t.connectionId}/webhooks/${theirs.body.data.id}/rotate-secret`,
    ]) {
      expect((await page.goto(`${api.url}${address}`))?.status()).toBe(404);
    }
    expect((await secrets(theirs.body.data.id)).secret).toBe(theirs.body.data.secret);
    for (const secret of [fresh, old])
      expect(stripe.webhooks.constructEvent(got.raw, got.headers['service-signature'] as string, secret).id).toBe(JSON.parse(got.raw).id);
  });
});
