import { INestApplicationContext } from '@nestjs/common';
import { CasesService } from '@features/cases';
import { ConnectionsService } from '@features/connections';
import { ConversationIngestService } from '@features/conversations';
import { OrganisationsService } from '@features/organisations';
import { verifySignature, WebhooksService, WebhookTls } from '@features/webhooks';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, PHONE, signIn, submit, useBrowser, visitCheck } from './support/browser';
import { until } from './support/until';
import { Reply, WebhookReceiver } from './support/webhook-receiver';
import { retireDeliveries } from './support/webhook-stand';
import { startWebhookWorker } from './support/webhook-worker';

jest.setTimeout(90_000);

const rand = () => Math.random().toString(36).slice(2, 10);

/**
 * A connection's Webhooks and Deliveries pages in a real Chromium, against the real api, the real
 * delivery worker and a real HTTPS receiver on 127.0.0.1:443: adding a webhook (the secret once),
 * the API's address rules next to the field, events offered by scope, the test call, a delivery
 * and its attempts, resending one and resending many after an outage, removal, and read-only pages
 * while integrations are off.
 */
describe('Integrations section: webhooks and deliveries (browser)', () => {
  const { api } = useApi({
    ownAddress: true,
    // The retry timetable shrunk (tests only) so that eight failed attempts take about two seconds.
    env: { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WORKER_HEALTH_PORT: '0', WEBHOOK_RETRY_SCALE: '0.00001' },
    beforeClose: async () => {
      await worker?.close();
      await retireDeliveries(db);
    },
    hookTimeout: 60_000,
  });
  const { context, page } = useBrowser();
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let t: Tenant;
  let manager: ConsolePerson;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api.app.get(WebhookTls).ca = receiver.cert;
    // The worker with the api's own settings.
    worker = await startWebhookWorker(api.config, receiver.cert);
    db = api.app.get(DataSource);
    t = await makeTenant(api.app, ['conversations:read', 'webhooks:manage'], 'Webhooks org');
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Ada Lovelace');
  }, 60_000);
  afterAll(() => receiver?.close());
  beforeEach(() => signIn(page, api, manager.personId));

  const main = async () => (await page.textContent('main')) ?? '';
  const webhooksPage = (tenant: Tenant = t) => `${api.url}/console/connections/${tenant.connectionId}/webhooks`;
  const hookUrl = (label: string) => `https://127.0.0.1/console-${label}-${rand()}`;
  const hookIdOf = async (url: string): Promise<string> => String((await db.query(`SELECT id FROM webhooks WHERE url = $1`, [url]))[0].id);
  /** Adds a webhook over REST with the tenant's key (the console's own form is tested below). */
  const restHook = async (tenant: Tenant, url: string): Promise<string> => {
    const res = await api
      .http()
      .post('/v1/webhooks')
      .set(tenant.auth)
      .send({ url, events: ['conversation.ended'] });
    expect(res.status).toBe(201);
    return String(res.body.data.id);
  };
  /** An event: a conversation with a turn ends (conversation.ended). */
  const endConversation = async (tenant: Tenant) => {
    const c = (await api.app.get(CasesService).open(tenant.organisationId, { externalRef: `REF-${rand()}` })).case;
    const ingest = api.app.get(ConversationIngestService);
    const conv = await ingest.start(c.id, 'en', 'es');
    await ingest.appendTurn(conv.id, { speaker: 'patient', language: 'en', text: 'hello', translation: 'hola' });
    await ingest.end(conv.id);
  };
  /** A time as the since fields take it: UTC, year-month-day hours:minutes. */
  const sinceText = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');
  /**
   * The lines an element's text is laid out in (the first element matching `selector` whose text
   * holds `holding`): each character's box read through a Range, a new line wherever a character
   * sits lower than the one before it.
   */
  const linesOf = async (selector: string, holding = ''): Promise<string[]> =>
    (await page.evaluate(`(() => {
      const el = Array.from(document.querySelectorAll(${JSON.stringify(selector)})).find((e) => e.textContent.includes(${JSON.stringify(holding)}));
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      const chars = [];
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (let i = 0; i < n.data.length; i++) {
          const range = document.createRange();
          range.setStart(n, i);
          range.setEnd(n, i + 1);
          const box = range.getClientRects()[0];
          chars.push({ c: n.data[i], top: box ? box.top : null });
        }
      }
      const lines = [''];
      chars.forEach((ch, i) => {
        const before = i > 0 ? chars[i - 1].top : null;
        if (before !== null && ch.top !== null && ch.top > before + 4) lines.push('');
        lines[lines.length - 1] += ch.c;
      });
      return lines;
    })()`)) as string[];
  const stateOf = async (webhookId: string, state: string, count: number) =>
    until(async () => {
      const rows: Array<{ id: string }> = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND state = $2 ORDER BY created_at`, [
        webhookId,
        state,
      ]);
      return rows.length >= count ? rows.map((r) => r.id) : undefined;
    }, `${count} ${state} deliveries of webhook ${webhookId}`);

  it('adds a webhook with events offered by scope, shows its secret once, and sends a test whose outcome the page shows', async () => {
    await page.goto(`${api.url}/console/connections/${t.connectionId}`);
    await page.getByRole('link', { name: 'Webhooks of Test connection' }).click();
    expect(page.url()).toBe(webhooksPage());
    expect(await page.textContent('h1')).toBe('Webhooks of Test connection');
    expect(await main()).toContain('This connection has no webhooks yet.');

    // Events the connection's scopes allow are offered; the others are shown disabled, naming the scope they need.
    expect(await page.getByRole('checkbox', { name: 'conversation.ended' }).isDisabled()).toBe(false);
    for (const [event, scope] of [
      ['user.joined', 'users:read'],
      ['summary.ready', 'summaries:read'],
      ['document.translated', 'documents:read'],
    ]) {
      const box = page.getByRole('checkbox', { name: event });
      expect(await box.isDisabled()).toBe(true);
      expect(await page.textContent(`#event-${event.replace('.', '-')}-hint`)).toContain(`Needs the scope ${scope}, which this connection does not hold.`);
    }
    await visitCheck(page, 'webhooks-empty');

    const url = hookUrl('added');
    const path = new URL(url).pathname;
    await page.getByLabel('Address').fill(url);
    await page.getByRole('checkbox', { name: 'conversation.ended' }).check();
    await submit(page, 'Add the webhook');
    expect(page.url()).toMatch(/\/console\/reveal\/[0-9a-f-]{36}$/);
    expect(await page.textContent('h1')).toBe('Your new webhook’s signing secret');
    const secret = ((await page.textContent('#new-secret')) ?? '').trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const id = await hookIdOf(url);
    expect((await db.query(`SELECT secret FROM webhooks WHERE id = $1`, [id]))[0].secret).toBe(secret);
    await visitCheck(page, 'webhook-secret');
    await page.reload();
    expect(await page.textContent('h1')).toBe('This secret is no longer shown');
    expect(await main()).not.toContain(secret);

    await page.goto(webhooksPage());
    const row = page.locator('table tbody tr', { hasText: url });
    expect(await row.textContent()).toContain('conversation.ended');
    expect(await row.textContent()).toContain('active');
    expect(await main()).not.toContain(secret);
    await visitCheck(page, 'webhooks');

    // The test call: signed with the secret just shown, its outcome read back from the log onto the page.
    await submit(page, `Send a test to ${url}`);
    expect(page.url()).toMatch(/\/webhooks\?tested=[0-9a-f]{32}#test-result$/);
    const result = (await page.textContent('#test-result')) ?? '';
    expect(result).toContain(`Test of ${url}`);
    expect(result).toContain('Delivered. The receiver answered 200 in');
    expect(result).toMatch(/Duration\s*\d+ ms/);
    expect(result).toMatch(/Error\s*none/);
    const [got] = await receiver.waitFor(path);
    expect(JSON.parse(got.raw).event).toBe('webhook.test');
    expect(verifySignature(got.headers['service-signature'] as string, got.raw, secret)).toBe(true);
    await visitCheck(page, 'webhook-test');

    // Sooner than 5 seconds after: not sent, and the page says why and how long to wait.
    await submit(page, `Send a test to ${url}`);
    const refused = (await page.textContent('#test-result')) ?? '';
    expect(refused).toContain('Not sent.');
    expect(refused).toMatch(/once every 5 seconds.*Wait [1-5] seconds?, then send the test again\./s);
    expect(await page.evaluate('document.activeElement.id')).toBe('test-result');
    expect(receiver.received(path)).toHaveLength(1);
    await visitCheck(page, 'webhook-test-too-soon');

    // A receiver that refuses: not delivered, with its status and the error.
    const failing = hookUrl('test-fails');
    receiver.reply(new URL(failing).pathname, { status: 503 });
    await restHook(t, failing);
    await page.goto(webhooksPage());
    await submit(page, `Send a test to ${failing}`);
    const failed = (await page.textContent('#test-result')) ?? '';
    expect(failed).toContain('Not delivered. The receiver answered 503 in');
    expect(failed).toMatch(/Error\s*\S+/);
    expect(failed).not.toMatch(/Error\s*none/);
    await visitCheck(page, 'webhook-test-failed');
  });

  it('refuses an address with the API’s own words next to the field, keeping what was typed', async () => {
    await page.goto(webhooksPage());
    const bad = [
      'http://hooks.example.com/x',
      'https://127.0.0.1:8443/x',
      'https://10.1.2.3/x',
      'https://user:pw@hooks.example.com/x',
      '',
      'https://hooks.example.com/a"<b>',
    ];
    for (const url of bad) {
      const api422 = await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url, events: ['conversation.ended'] });
      expect(api422.status).toBe(422);
      const apiMessage = String(api422.body.error.message);
      expect(apiMessage).toMatch(/^url: /);
      await page.getByLabel('Address').fill(url);
      await page.getByRole('checkbox', { name: 'conversation.ended' }).check();
      await submit(page, 'Add the webhook');
      expect(await page.textContent('#url-error')).toContain(`The address ${apiMessage.slice('url: '.length)}`);
      expect(await page.inputValue('#url')).toBe(url);
      expect(await page.getAttribute('#url', 'aria-invalid')).toBe('true');
      expect(await page.getByRole('checkbox', { name: 'conversation.ended' }).isChecked()).toBe(true);
    }
    await visitCheck(page, 'webhooks-address-error');

    // No event chosen, and an event the connection lacks the scope for (a forged form): the domain's words.
    await page.getByLabel('Address').fill('https://hooks.example.com/fine');
    await page.getByRole('checkbox', { name: 'conversation.ended' }).uncheck();
    await submit(page, 'Add the webhook');
    expect(await page.textContent('#events-error')).toContain('Events must list at least one event.');
    expect(await page.inputValue('#url')).toBe('https://hooks.example.com/fine');
    await page.locator('#event-user-joined').evaluate((el) => {
      (el as unknown as { disabled: boolean; checked: boolean }).disabled = false;
      (el as unknown as { disabled: boolean; checked: boolean }).checked = true;
    });
    await submit(page, 'Add the webhook');
    expect(await page.textContent('#events-error')).toContain('Events "user.joined" needs the scope users:read, which the connection does not hold.');
    expect((await db.query(`SELECT count(*)::int AS n FROM webhooks WHERE url = 'https://hooks.example.com/fine'`))[0].n).toBe(0);
    await visitCheck(page, 'webhooks-events-error');
  });

  it('shows a delivery and its attempts, resends it as a new series, and resends every failed one since a time', async () => {
    const url = hookUrl('deliveries');
    const path = new URL(url).pathname;
    const id = await restHook(t, url);
    receiver.reply(path, { status: 500 });
    await endConversation(t);
    const [first] = await stateOf(id, 'failed', 1);

    const deliveries = `${webhooksPage()}/${id}/deliveries`;
    await page.goto(webhooksPage());
    await page.getByRole('link', { name: `Deliveries to ${url}` }).click();
    expect(page.url()).toBe(deliveries);
    expect(await page.textContent('h1')).toBe(`Deliveries to ${url}`);
    const row = page.locator('table tbody tr').first();
    expect(await row.textContent()).toContain('conversation.ended');
    expect(await row.textContent()).toContain('failed');
    expect(await row.textContent()).toContain('500');
    await visitCheck(page, 'deliveries');

    await row.getByRole('link').click();
    expect(page.url()).toBe(`${deliveries}/${first}`);
    expect(await main()).toContain(first);
    const series1 = page.locator('table', { has: page.locator('caption', { hasText: 'Series 1' }) });
    expect(await series1.locator('tbody tr').count()).toBe(8);
    expect(((await series1.locator('tbody tr').first().textContent()) ?? '').trim()).toMatch(/^1\s.*failed \(error status\)\s*500\s*\d+ ms\s*answered 500$/s);
    await visitCheck(page, 'delivery');

    // The receiver is back: resend (confirmed) starts series 2 under the same delivery id.
    receiver.reply(path, { status: 200 });
    await page.getByRole('link', { name: 'Resend this delivery…' }).click();
    expect(await page.textContent('h1')).toBe('Resend this delivery?');
    expect(await main()).toContain('series 2 starts now');
    await visitCheck(page, 'delivery-resend-confirm');
    await submit(page, 'Resend the delivery');
    expect(page.url()).toBe(`${deliveries}/${first}?done=resent`);
    expect(await main()).toContain('a new series of attempts has started under the same delivery id');
    await stateOf(id, 'delivered', 1);
    await page.reload();
    const series2 = page.locator('table', { has: page.locator('caption', { hasText: 'Series 2 (the current one)' }) });
    expect(await series2.locator('tbody tr').count()).toBe(1);
    expect(await series2.textContent()).toMatch(/delivered\s*200/);
    const redelivered = receiver.received(path).map((r) => JSON.parse(r.raw).id as string);
    expect(redelivered).toHaveLength(9);
    expect(new Set(redelivered)).toEqual(new Set([first]));
    await visitCheck(page, 'delivery-resent');

    // An outage: three more deliveries fail for good.
    receiver.reply(path, { status: 502 });
    await Promise.all([endConversation(t), endConversation(t), endConversation(t)]);
    const failedIds = await stateOf(id, 'failed', 3);
    receiver.reply(path, { status: 200 });

    // Filtered by state (keyset pages, newest first), and by event.
    await page.goto(deliveries);
    await page.getByLabel('State').selectOption('failed');
    await submit(page, 'Show');
    expect(page.url()).toBe(`${deliveries}?state=failed&event=`);
    expect(await page.locator('table tbody tr').count()).toBe(3);
    await visitCheck(page, 'deliveries-filtered');
    await page.getByLabel('Event').selectOption('webhook.test');
    await submit(page, 'Show');
    expect(await main()).toContain('No delivery matches these filters.');

    // The morning after: a bad time is refused next to its field, then the confirmation says how many.
    await page.goto(deliveries);
    // The field shows its value in the format of its hint (a text field: a datetime-local one shows the reader's locale's format).
    const sinceField = page.getByLabel('Send deliveries made since (UTC) that failed, were given up or are waiting');
    expect(await sinceField.getAttribute('type')).toBe('text');
    const example = /for example (\d{4}-\d{2}-\d{2} \d{2}:\d{2})\./.exec((await page.textContent('#since-hint')) ?? '')?.[1];
    expect(example).toBe('2026-01-31 08:00');
    expect(await sinceField.inputValue()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    await sinceField.fill('');
    await submit(page, 'Review what will be sent…');
    expect(await page.textContent('#since-error')).toContain('Enter the time to send from, in UTC.');
    expect(await page.evaluate('document.activeElement.id')).toBe('error-summary');
    await page.locator('#error-summary a').click();
    expect(await page.evaluate('document.activeElement.id')).toBe('since');
    await visitCheck(page, 'deliveries-bulk-error');
    await sinceField.fill('31/01/2026, 08:00');
    await submit(page, 'Review what will be sent…');
    expect(await page.textContent('#since-error')).toContain('in the form 2026-01-31 08:00 (year-month-day hours:minutes)');
    expect(await sinceField.inputValue()).toBe('31/01/2026, 08:00');
    const since = sinceText(new Date(Date.now() - 3600_000));
    await page.getByLabel('Send deliveries made since (UTC) that failed, were given up or are waiting').fill(since);
    await submit(page, 'Review what will be sent…');
    expect(await page.textContent('h1')).toBe('Send 3 deliveries now?');
    expect(await main()).toContain(`This sends 3 deliveries to ${url} made since`);
    await visitCheck(page, 'deliveries-bulk-confirm');
    await submit(page, 'Send 3 deliveries now');
    expect(page.url()).toBe(`${deliveries}?done=bulk-resent`);
    expect(await main()).toContain('The deliveries are being sent now');
    await stateOf(id, 'delivered', 4);
    for (const d of failedIds) {
      const [row] = await db.query(`SELECT state, series FROM webhook_deliveries WHERE id = $1`, [d]);
      expect(row).toEqual({ state: 'delivered', series: 2 });
    }
    await page.reload();
    const states = await page.locator('table tbody tr td:nth-child(4)').allTextContents();
    expect(states.map((s) => s.trim())).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });

  it('shows each attempt’s exchange in copyable blocks (a body that is not text as its size and type), and tries a waiting delivery now, at desktop and 390 px', async () => {
    const url = hookUrl('exchange');
    const path = new URL(url).pathname;
    const id = await restHook(t, url);
    let n = 0;
    // The first attempt answers JSON, the others an image: eight failures in all (the timetable is shrunk here).
    receiver.reply(path, (): Reply =>
      ++n === 1
        ? { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '60' }, body: '{"error":"down for maintenance"}' }
        : { status: 502, headers: { 'content-type': 'image/png' }, body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]) },
    );
    await endConversation(t);
    const [did] = await stateOf(id, 'failed', 1);
    const [got] = receiver.received(path);
    const deliveryPage = `${webhooksPage()}/${id}/deliveries/${did}`;
    await page.goto(deliveryPage);
    // The body sent, exactly as the receiver got it.
    expect(await page.textContent('#sent-body')).toBe(got.raw);
    expect(await page.getByRole('button', { name: 'Copy the body' }).isVisible()).toBe(true);
    const first = page.locator('details.exchange').first();
    await first.locator('summary').click();
    const blocks = await first.locator('pre').allTextContents();
    expect(blocks[0]).toContain(`service-signature: ${got.headers['service-signature'] as string}`);
    expect(blocks[0]).toContain('content-type: application/json');
    expect(blocks[1]).toContain('retry-after: 60');
    expect(blocks[2]).toBe('{"error":"down for maintenance"}');
    expect(await first.textContent()).toContain('Status 503');
    const second = page.locator('details.exchange').nth(1);
    await second.locator('summary').click();
    expect(await second.textContent()).toContain('Not text: 8 bytes, type image/png.');
    expect(await second.locator('pre').count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Try now' }).count()).toBe(0);
    await visitCheck(page, 'delivery-exchange');

    // Now waiting for its eighth attempt, an hour away: the page offers Try now (and so does the log).
    await db.query(
      `UPDATE webhook_deliveries SET state = 'waiting', attempts = 7, next_attempt_at = now() + interval '1 hour', finished_at = NULL WHERE id = $1`,
      [did],
    );
    receiver.reply(path, { status: 200 });
    await page.goto(`${webhooksPage()}/${id}/deliveries`);
    expect(await page.getByRole('button', { name: `Try now delivery ${did.slice(0, 12)}` }).count()).toBe(1);
    await visitCheck(page, 'deliveries-try-now');
    await page.goto(deliveryPage);
    expect(await main()).toContain('Trying it now brings that attempt forward; it is not attempted twice.');
    await visitCheck(page, 'delivery-waiting');
    await submit(page, 'Try now');
    expect(page.url()).toBe(`${deliveryPage}?done=tried-now`);
    expect(await main()).toContain('The delivery is being tried now');
    await stateOf(id, 'delivered', 1);
    expect(receiver.received(path)).toHaveLength(9);
    const [row] = await db.query(`SELECT series, attempts FROM webhook_deliveries WHERE id = $1`, [did]);
    expect(row).toEqual({ series: 1, attempts: 8 });
    await page.reload();
    expect(await page.getByRole('button', { name: 'Try now' }).count()).toBe(0);
    await visitCheck(page, 'delivery-tried-now');

    // Waiting again, its attempt an hour away: the outage form sends waiting deliveries too (tried now, in their series).
    await db.query(
      `UPDATE webhook_deliveries SET state = 'waiting', attempts = 7, next_attempt_at = now() + interval '1 hour', finished_at = NULL WHERE id = $1`,
      [did],
    );
    await page.goto(`${webhooksPage()}/${id}/deliveries`);
    await page.getByLabel('Send deliveries made since (UTC) that failed, were given up or are waiting').fill(sinceText(new Date(Date.now() - 3600_000)));
    await submit(page, 'Review what will be sent…');
    expect(await page.textContent('h1')).toBe('Send 1 delivery now?');
    expect(await main()).toContain('made since');
    expect(await main()).toContain('that failed, was given up or is waiting for a retry.');
    expect(await main()).toContain('A delivery waiting for a retry is tried now instead of at its scheduled time (never twice).');
    await visitCheck(page, 'deliveries-outage-confirm-waiting');
    await submit(page, 'Send 1 delivery now');
    expect(await main()).toContain('The deliveries are being sent now');
    await stateOf(id, 'delivered', 1);
    expect(receiver.received(path)).toHaveLength(10);
    expect((await db.query(`SELECT series, attempts FROM webhook_deliveries WHERE id = $1`, [did]))[0]).toEqual({ series: 1, attempts: 8 });
  });

  it('switches a switched-off webhook back on from its page, resending what was given up since a time (checked like the outage form) or nothing, and says how many', async () => {
    const url = hookUrl('enable');
    const path = new URL(url).pathname;
    const id = await restHook(t, url);
    await db.query(`UPDATE webhooks SET switched_off_at = now(), failing_since = now() - interval '3 days' WHERE id = $1`, [id]);
    // Given up while it was off: three in the last two hours, one two days ago (before the time given below).
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, give_up_reason, finished_at, created_at, updated_at)
       SELECT md5($1 || g), $2, $3, $4, 'conversation.ended', now(), '{}', 'given_up', 'webhook_switched_off', now(),
              now() - make_interval(mins => g * 30) - CASE WHEN g = 4 THEN interval '2 days' ELSE interval '0' END, now()
         FROM generate_series(1, 4) g`,
      [rand(), id, t.organisationId, t.connectionId],
    );
    await page.goto(webhooksPage());
    expect(await main()).toContain('Once its receiver answers, switch it back on');
    await visitCheck(page, 'webhooks-switched-off');
    // The badge stays on one line at 390 px.
    await page.setViewportSize(PHONE);
    const badge = page.locator('table tbody tr', { hasText: url }).locator('.tag', { hasText: 'switched off' });
    expect(await linesOf('.tag.bad', 'switched off')).toEqual(['switched off']);
    expect((await badge.boundingBox())!.height).toBeLessThan(30);
    await page.setViewportSize({ width: 1280, height: 860 });

    await page.getByRole('link', { name: `Switch back on… ${url}` }).click();
    expect(page.url()).toBe(`${webhooksPage()}/${id}/enable`);
    expect(await page.textContent('h1')).toBe('Switch the webhook back on');
    const field = page.getByLabel('Also resend what was given up since (UTC, optional)');
    expect(await field.inputValue()).toBe('');
    const [{ failing_since: failing }] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [id]);
    expect(await page.textContent('#recover_since-hint')).toContain(`It began failing at ${sinceText(failing)}: that time resends everything given up since.`);
    await visitCheck(page, 'webhook-enable');

    // Refused next to the field, with the focus on what went wrong, and nothing switched on: not a time, in the future, older than the log.
    for (const [given, problem] of [
      ['yesterday', 'Enter the time to resend from as a date and time in UTC, in the form 2026-01-31 08:00 (year-month-day hours:minutes).'],
      ['2026-02-30 08:00', 'Enter the time to resend from as a date and time in UTC, in the form 2026-01-31 08:00'],
      [sinceText(new Date(Date.now() + 3 * 3600_000)), 'The time to resend from must not be in the future.'],
      [sinceText(new Date(Date.now() - 100 * 86_400_000)), 'The time to resend from must be within the last 90 days'],
    ]) {
      await field.fill(given);
      await submit(page, 'Switch back on');
      expect(await page.textContent('#recover_since-error')).toContain(problem);
      expect(await field.inputValue()).toBe(given);
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      expect(await page.evaluate('document.activeElement.id')).toBe('error-summary');
    }
    expect((await db.query(`SELECT switched_off_at FROM webhooks WHERE id = $1`, [id]))[0].switched_off_at).not.toBeNull();
    await visitCheck(page, 'webhook-enable-refused');

    // Three hours back: the three given up since then are sent again, each as a new series; the older one is not.
    receiver.reply(path, { status: 200 });
    await field.fill(sinceText(new Date(Date.now() - 3 * 3600_000)));
    await submit(page, 'Switch back on');
    expect(page.url()).toBe(`${webhooksPage()}?done=enabled-resent&resent=3`);
    expect(await page.textContent('main .notice')).toBe(
      'The webhook is switched back on: events are sent to it again from now. 3 deliveries given up since the time you gave are being sent again, each as a new series of attempts under its own delivery id.',
    );
    expect(await page.getByRole('link', { name: `Switch back on… ${url}` }).count()).toBe(0);
    await visitCheck(page, 'webhooks-switched-on-resent');
    expect(await db.query(`SELECT switched_off_at, failing_since FROM webhooks WHERE id = $1`, [id])).toEqual([{ switched_off_at: null, failing_since: null }]);
    await stateOf(id, 'delivered', 3);
    await until(async () => receiver.received(path).length >= 3, 'three deliveries resent');
    const rows: Array<{ state: string; series: number }> = await db.query(
      `SELECT state, series FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at`,
      [id],
    );
    expect(rows).toEqual([
      { state: 'given_up', series: 1 },
      { state: 'delivered', series: 2 },
      { state: 'delivered', series: 2 },
      { state: 'delivered', series: 2 },
    ]);
    // Opening the page again, or sending its form again, changes nothing more.
    await page.goto(`${webhooksPage()}/${id}/enable`);
    expect(page.url()).toBe(webhooksPage());

    // Another one switched back on with the field left empty: events are sent again, nothing is resent.
    const bare = hookUrl('enable-bare');
    const bareId = await restHook(t, bare);
    await db.query(`UPDATE webhooks SET switched_off_at = now(), failing_since = now() - interval '3 days' WHERE id = $1`, [bareId]);
    await page.goto(webhooksPage());
    await page.getByRole('link', { name: `Switch back on… ${bare}` }).click();
    await submit(page, 'Switch back on');
    expect(page.url()).toBe(`${webhooksPage()}?done=enabled`);
    expect(await main()).toContain(
      'The webhook is switched back on: events are sent to it again from now. Its deliveries given up while it was off can be sent again',
    );
    await visitCheck(page, 'webhooks-switched-on');
    receiver.reply(new URL(bare).pathname, { status: 200 });
    await endConversation(t);
    await stateOf(bareId, 'delivered', 1);
  });

  it('wraps a long webhook address at its slashes at 390 px, never inside its host', async () => {
    const host = 'hooks.acme-care.example';
    const url = `https://${host}/interpreting-platform/webhooks/conversation-events/v2/${rand()}`;
    const [{ id }] = await db.query(
      `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, $3, '{conversation.ended}', 'whsec_x') RETURNING id`,
      [t.organisationId, t.connectionId, url],
    );
    await page.setViewportSize(PHONE);
    const check = async (selector: string, holding = '', before = '') => {
      const lines = await linesOf(selector, holding);
      expect(lines.join('')).toBe(`${before}${url}`);
      expect(lines.length).toBeGreaterThan(1);
      // Every line but the last ends at a slash (or before the address), and one line holds the whole host.
      for (const line of lines.slice(0, -1)) expect([selector, line, /(\/| )$/.test(line)]).toEqual([selector, line, true]);
      expect(lines.some((line) => line.includes(host))).toBe(true);
    };
    await page.goto(webhooksPage());
    await check('th.url code', host);
    await page.goto(`${webhooksPage()}/${id}/deliveries`);
    await check('main h1', host, 'Deliveries to ');
    await check('dl.facts dd code.url', host);
    await page.setViewportSize({ width: 1280, height: 860 });
    await visitCheck(page, 'deliveries-long-address');
    await db.query(`UPDATE webhooks SET deleted_at = now() WHERE id = $1`, [id]);
  });

  it('pages through a long log with an Older link (no page numbers), and removes a webhook after a confirmation', async () => {
    const url = hookUrl('long');
    const id = await restHook(t, url);
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, finished_at, created_at, updated_at)
       SELECT md5($1 || g), $2, $3, $4, 'conversation.ended', now(), '{}', 'delivered', now(),
              now() - make_interval(mins => g), now()
         FROM generate_series(1, 30) g`,
      [rand(), id, t.organisationId, t.connectionId],
    );
    const deliveries = `${webhooksPage()}/${id}/deliveries`;
    await page.goto(deliveries);
    expect(await page.locator('table tbody tr').count()).toBe(25);
    expect(await page.getByRole('link', { name: 'Newest' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Older' }).click();
    expect(page.url()).toMatch(/\/deliveries\?cursor=/);
    expect(await page.locator('table tbody tr').count()).toBe(5);
    expect(await page.getByRole('link', { name: 'Older' }).count()).toBe(0);
    await visitCheck(page, 'deliveries-older');
    await page.getByRole('link', { name: 'Newest' }).click();
    expect(page.url()).toBe(deliveries);

    await page.goto(webhooksPage());
    await page.getByRole('link', { name: `Remove ${url}` }).click();
    expect(await page.textContent('h1')).toBe('Remove this webhook?');
    await visitCheck(page, 'webhook-remove-confirm');
    await submit(page, 'Remove the webhook');
    expect(page.url()).toBe(`${webhooksPage()}?done=removed`);
    expect(await main()).toContain('The webhook was removed');
    expect(await main()).not.toContain(url);
    const [gone] = await db.query(`SELECT deleted_at, secret FROM webhooks WHERE id = $1`, [id]);
    expect(gone.deleted_at).not.toBeNull();
    expect(gone.secret).toBe('');
    await page.goto(deliveries);
    expect(await page.textContent('h1')).toBe('That could not be done');
    await visitCheck(page, 'problem-removed-webhook');
  });

  it('keeps another organisation’s webhooks out, and shows read-only pages while integrations are off', async () => {
    const other = await makeTenant(api.app, ['conversations:read', 'webhooks:manage'], 'Other org');
    const theirs = await restHook(other, hookUrl('theirs'));
    await page.goto(webhooksPage(other));
    expect(await page.textContent('h1')).toBe('That could not be done');
    await page.goto(`${webhooksPage(other)}/${theirs}/deliveries`);
    expect(await page.textContent('h1')).toBe('That could not be done');
    // Their webhook under our connection's address is not found either.
    await page.goto(`${webhooksPage()}/${theirs}/deliveries`);
    expect(await page.textContent('h1')).toBe('That could not be done');
    // Nor can a forged form change it (a valid CSRF token of ours), and a form without the token changes nothing of ours.
    await page.goto(webhooksPage());
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const post = (action: string, form: Record<string, string>) =>
      page.evaluate(async ({ action, form }) => (await fetch(action, { method: 'POST', body: new URLSearchParams(form) })).status, { action, form });
    expect(await post(`${webhooksPage(other)}/${theirs}/remove`, { _csrf: csrf })).toBe(404);
    expect(await post(`${webhooksPage()}/${theirs}/remove`, { _csrf: csrf })).toBe(404);
    expect(await post(`${webhooksPage(other)}/${theirs}/deliveries/resend-failed`, { _csrf: csrf, since: '2020-01-01T00:00' })).toBe(404);
    expect((await db.query(`SELECT deleted_at FROM webhooks WHERE id = $1`, [theirs]))[0].deleted_at).toBeNull();
    const ours = await restHook(t, hookUrl('csrf'));
    expect(await post(`${webhooksPage()}/${ours}/remove`, {})).toBe(403);
    expect((await db.query(`SELECT deleted_at FROM webhooks WHERE id = $1`, [ours]))[0].deleted_at).toBeNull();

    // A revoked connection's webhooks can be read, not added to, tested or resent.
    const partner = await api.app.get(ConnectionsService).create(t.organisationId, 'Revoked partner', ['conversations:read']);
    const { webhook: stopped } = await api.app
      .get(WebhooksService)
      .create(
        { organisationId: t.organisationId, connectionId: partner.id, scopes: partner.scopes },
        { url: hookUrl('revoked'), events: ['conversation.ended'] },
      );
    await api.app.get(ConnectionsService).revoke(partner.id);
    const revokedPage = `${api.url}/console/connections/${partner.id}/webhooks`;
    await page.goto(revokedPage);
    expect(await main()).toContain('This connection is revoked: its webhooks are stopped, and none can be added or tested.');
    expect(await page.locator('main form').count()).toBe(0);
    expect(await post(`${revokedPage}/${stopped.id}/test`, { _csrf: csrf })).toBe(422);
    expect(await post(`${revokedPage}/${stopped.id}/deliveries/resend-failed`, { _csrf: csrf, since: '2020-01-01T00:00' })).toBe(422);

    const off = await makeTenant(api.app, ['conversations:read', 'webhooks:manage'], 'Policy off org');
    const offManager = await makeConsolePerson(api.app, off.organisationId, ['integrations.manage']);
    const offHook = await restHook(off, hookUrl('read-only'));
    await api.app.get(OrganisationsService).setPolicy(off.organisationId, false);
    await context.clearCookies();
    await signIn(page, api, offManager.personId);
    await page.goto(webhooksPage(off));
    expect(await main()).toContain('cannot be added, tested or removed while integrations are off');
    // The only form left on the page is the header's sign-out.
    expect(await page.locator('main form').count()).toBe(0);
    expect(await page.getByRole('link', { name: /^Remove/ }).count()).toBe(0);
    await visitCheck(page, 'webhooks-read-only');
    await page.goto(`${webhooksPage(off)}/${offHook}/deliveries`);
    expect(await page.locator('main form[method="post"]').count()).toBe(0);
    expect(await page.locator('#since').count()).toBe(0);
    await visitCheck(page, 'deliveries-read-only');
    await page.goto(`${webhooksPage(off)}/${offHook}/remove`);
    expect(page.url()).toBe(webhooksPage(off));
  });
});
