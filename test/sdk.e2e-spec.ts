import { TransactionHost } from '@kernel/database';
import { ConversationIngestService } from '@features/conversations';
import { DomainsService } from '@features/organisations';
import { ApiError, Integrations, verifyWebhook } from '../sdk/typescript/src';
import { makeTenant, startApi, Tenant, TestApi, useApi } from './support/api';
import { ProbeRoutesModule } from './support/probe-routes.module';
import { startWebhookStand, WebhookStand } from './support/webhook-stand';

const SLOW = 60_000;
const rand = () => Math.random().toString(36).slice(2, 10);

/** Each attempt the SDK sends, as it went out and as it was answered (a network failure has no answer). */
interface Sent {
  method: string;
  path: string;
  key: string | null;
  status?: number;
  replayed?: string | null;
}

/** A real fetch that records every attempt; `lose(n)` drops the answer of the next n attempts after the api has handled them. */
function recordingFetch() {
  const sent: Sent[] = [];
  let losing = 0;
  const fetchImpl = async (request: Request): Promise<Response> => {
    const entry: Sent = { method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key') };
    sent.push(entry);
    const response = await fetch(request);
    entry.status = response.status;
    entry.replayed = response.headers.get('idempotent-replayed');
    if (losing > 0) {
      losing--;
      await response.arrayBuffer();
      throw new TypeError('fetch failed: the connection was reset before the answer arrived');
    }
    return response;
  };
  return { sent, fetch: fetchImpl, lose: (n: number) => void (losing = n) };
}

describe('the TypeScript SDK against the real api', () => {
  let stand: WebhookStand;
  let api: TestApi;
  let t: Tenant;
  let sdk: Integrations;

  beforeAll(async () => {
    stand = await startWebhookStand({});
    api = stand.api;
    t = await makeTenant(api.app);
    sdk = new Integrations({ baseUrl: api.url, apiKey: t.key, retryBaseDelayMs: 50 });
  }, SLOW);
  afterAll(() => stand?.close(), SLOW);

  it('sends the key: getMe answers the connection', async () => {
    const { data, response } = await sdk.getMe();
    expect(response.status).toBe(200);
    expect(data.data).toMatchObject({ id: t.connectionId, organisation: { id: t.organisationId } });
  });

  it('opens a case, asks for the address that starts a conversation, and reads the conversation the member app made', async () => {
    const externalRef = `SDK-${rand()}`;
    const opened = await sdk.openCase({ body: { external_ref: externalRef, title: 'Through the SDK' } });
    expect(opened.response.status).toBe(201);
    const caseId = opened.data.data.id;
    expect(opened.data.data).toMatchObject({ external_ref: externalRef, title: 'Through the SDK' });
    expect((await sdk.getCase({ path: { id: caseId } })).data.data.id).toBe(caseId);

    const start = await sdk.getCaseConversationUrl({ path: { id: caseId } });
    expect(start.data.data.case_id).toBe(caseId);
    expect(start.data.data.url).toMatch(new RegExp(`^https://.+/cases/${caseId}/conversations/new$`));

    // The member app (here its ingest service) holds the conversation; the SDK reads it.
    const conversation = await api.app.get(ConversationIngestService).start(caseId, 'en', 'es');
    const got = await sdk.getConversation({ path: { id: conversation.id } });
    expect(got.data.data).toMatchObject({ id: conversation.id, case_id: caseId });
    const listed: string[] = [];
    for await (const c of sdk.paginate((cursor) => sdk.listConversations({ query: { limit: 1, cursor } }))) listed.push(c.id);
    expect(listed).toContain(conversation.id);
  });

  it('sends a document to translate and reads it back', async () => {
    const caseId = (await sdk.openCase({ body: { external_ref: `DOC-${rand()}` } })).data.data.id;
    const sent = await sdk.createDocument({ body: { case_id: caseId, source_language: 'en', target_language: 'es', text: 'Good morning.' } });
    expect(sent.response.status).toBe(202);
    expect(sent.data.data).toMatchObject({ case_id: caseId, source_language: 'en', target_language: 'es', format: 'text' });
    const read = await sdk.getDocument({ path: { id: sent.data.data.id } });
    expect(read.data.data.id).toBe(sent.data.data.id);
  });

  it('pages through every user, following next_cursor across several pages', async () => {
    const tenant = await makeTenant(api.app);
    const domain = `sdk-${rand()}.example`;
    await new DomainsService(api.app.get(TransactionHost)).add(tenant.organisationId, domain);
    const client = new Integrations({ baseUrl: api.url, apiKey: tenant.key });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const added = await client.addUser({ body: { email: `person-${i}-${rand()}@${domain}`, name: `Person ${i}` } });
      expect(added.response.status).toBe(201);
      made.push((added.data as { data: { id: string } }).data.id);
    }
    const pages = recordingFetch();
    const paging = new Integrations({ baseUrl: api.url, apiKey: tenant.key, fetch: pages.fetch });
    const seen: string[] = [];
    for await (const person of paging.paginate((cursor) => paging.listUsers({ query: { limit: 2, cursor } }))) seen.push(person.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(made));
    // Five people and the tenant's own at 2 a page: at least three pages, each asked once.
    expect(pages.sent.length).toBeGreaterThanOrEqual(Math.max(3, Math.ceil(seen.length / 2)));
    expect(pages.sent.every((s) => s.method === 'GET' && s.path === '/v1/users' && s.status === 200)).toBe(true);
  });

  it('creates a webhook, and verifyWebhook accepts a real delivery with its secret (alone or among others) and refuses it otherwise', async () => {
    const url = `https://127.0.0.1/sdk-${rand()}`;
    const created = await sdk.createWebhook({ body: { url, events: ['conversation.ended'] } });
    expect(created.response.status).toBe(201);
    const secret = created.data.data.secret as string;
    expect(secret).toMatch(/^whsec_/);

    const caseId = (await sdk.openCase({ body: { external_ref: `HOOK-${rand()}` } })).data.data.id;
    const ingest = api.app.get(ConversationIngestService);
    const conversation = await ingest.start(caseId, 'en', 'es');
    await ingest.appendTurn(conversation.id, { speaker: 'patient', language: 'en', text: 'hello', translation: 'hola' });
    await ingest.end(conversation.id);

    const [delivery] = await stand.receiver.waitFor(new URL(url).pathname);
    const header = delivery.headers['service-signature'] as string;
    expect(JSON.parse(delivery.raw)).toMatchObject({ event: 'conversation.ended', data: { conversation_id: conversation.id } });
    expect(verifyWebhook(delivery.raw, header, secret)).toBe(true);
    expect(verifyWebhook(Buffer.from(delivery.raw), header, [`whsec_${'0'.repeat(64)}`, secret])).toBe(true);
    expect(verifyWebhook(delivery.raw, header, `whsec_${'0'.repeat(64)}`)).toBe(false);
    expect(verifyWebhook(`${delivery.raw} `, header, secret)).toBe(false);
    const signedAt = Number(/t=(\d+)/.exec(header)![1]);
    expect(verifyWebhook(delivery.raw, header, secret, { nowSeconds: signedAt + 301 })).toBe(false);
    expect(verifyWebhook(delivery.raw, header, secret, { nowSeconds: signedAt + 299 })).toBe(true);
    expect(verifyWebhook(delivery.raw, undefined, secret)).toBe(false);
  });

  it('an error answer throws ApiError with its status and code (404, 422)', async () => {
    const missing = await sdk.getCase({ path: { id: '999999999999' } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    expect((missing as ApiError).message).not.toBe('');
    expect((missing as ApiError).requestId).toEqual(expect.any(String));

    const invalid = await sdk.openCase({ body: { external_ref: '' } }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ApiError);
    expect(invalid).toMatchObject({ status: 422, code: 'validation_failed' });
    expect((invalid as ApiError).message).toMatch(/external_ref/);
  });

  it('after a lost answer, retries the POST with the same Idempotency-Key and gets the first answer replayed', async () => {
    const rec = recordingFetch();
    const client = new Integrations({ baseUrl: api.url, apiKey: t.key, fetch: rec.fetch, retryBaseDelayMs: 10 });
    rec.lose(1);
    const name = `Group ${rand()}`;
    const made = await client.createGroup({ body: { name } });
    expect(made.response.status).toBe(201);
    expect(made.data.data.name).toBe(name);
    // The api made the group on the first attempt; a second group of that name would be refused 409.
    expect(rec.sent).toEqual([
      { method: 'POST', path: '/v1/groups', key: expect.any(String), status: 201, replayed: null },
      { method: 'POST', path: '/v1/groups', key: rec.sent[0].key, status: 201, replayed: 'true' },
    ]);
    const groups: string[] = [];
    for await (const g of client.paginate((cursor) => client.listGroups({ query: { limit: 100, cursor } }))) if (g.name === name) groups.push(g.id);
    expect(groups).toEqual([made.data.data.id]);
  });
});

describe('the SDK under the rate limit', () => {
  let api: TestApi;
  let t: Tenant;

  beforeAll(async () => {
    // A bucket of 3 calls refilled at 1 a second: a few calls empty it, and its Retry-After is short.
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' });
    t = await makeTenant(api.app);
  }, SLOW);
  afterAll(() => api?.close());

  it(
    'a 429 is retried after its Retry-After with the same Idempotency-Key, which the api then holds for that request',
    async () => {
      const rec = recordingFetch();
      const client = new Integrations({ baseUrl: api.url, apiKey: t.key, fetch: rec.fetch });
      // Empty the bucket with plain calls until one is refused, then open the case: its first attempt
      // is refused too unless the bucket refilled in between (a slow machine), when all is tried again.
      const emptyBucket = async () => {
        for (let i = 0; i < 40; i++) {
          const res = await fetch(`${api.url}/v1/me`, { headers: t.auth });
          await res.arrayBuffer();
          if (res.status === 429) return res;
        }
        throw new Error('no 429 after 40 calls');
      };
      let externalRef: string;
      let opened: Awaited<ReturnType<Integrations['openCase']>>;
      let rounds = 0;
      do {
        rec.sent.length = 0;
        externalRef = `RL-${rand()}`;
        expect((await emptyBucket()).headers.get('retry-after')).toMatch(/^\d+$/);
        opened = await client.openCase({ body: { external_ref: externalRef } });
      } while (rec.sent[0].status !== 429 && ++rounds < 5);
      expect(opened.response.status).toBe(201);
      expect(rec.sent.length).toBeGreaterThanOrEqual(2);
      expect(rec.sent[0].status).toBe(429);
      expect(rec.sent.at(-1)!.status).toBe(201);
      const key = rec.sent[0].key;
      expect(key).toEqual(expect.any(String));
      expect(rec.sent.every((s) => s.key === key && s.path === '/v1/cases')).toBe(true);

      // The api stored that key with the request the SDK retried: the same request answers the same case, replayed.
      let replay: Response;
      do {
        replay = await fetch(`${api.url}/v1/cases`, {
          method: 'POST',
          headers: { ...t.auth, 'content-type': 'application/json', 'idempotency-key': key! },
          body: JSON.stringify({ external_ref: externalRef }),
        });
        if (replay.status === 429) await new Promise((r) => setTimeout(r, Number(replay.headers.get('retry-after')) * 1000));
      } while (replay.status === 429);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(((await replay.json()) as { data: { id: string } }).data.id).toBe(opened.data.data.id);
    },
    SLOW,
  );

  it('gives back the last 429 as ApiError rate_limited once its retries are spent', async () => {
    const tenant = await makeTenant(api.app);
    const client = new Integrations({ baseUrl: api.url, apiKey: tenant.key, retries: 0 });
    let error: unknown;
    for (let i = 0; i < 40 && !error; i++)
      error = await client.getMe().then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
  });
});

describe('the SDK on a server error', () => {
  const { api, t } = useApi({ modules: [ProbeRoutesModule], tenant: true });

  it('a 5xx GET is retried with backoff, a bounded number of times, then thrown as ApiError server_error', async () => {
    const rec = recordingFetch();
    const client = new Integrations({ baseUrl: api.url, apiKey: t.key, fetch: rec.fetch, retries: 2, retryBaseDelayMs: 10 });
    const error = await client.http.get({ url: '/v1/_probe/boom', security: [{ scheme: 'bearer', type: 'http' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, code: 'server_error' });
    expect(rec.sent.map((s) => [s.method, s.path, s.status])).toEqual([
      ['GET', '/v1/_probe/boom', 500],
      ['GET', '/v1/_probe/boom', 500],
      ['GET', '/v1/_probe/boom', 500],
    ]);
  });
});
