import { verifySignature, WebhookTls } from '@features/webhooks';
import { makeTenant } from './support/api';
import { DocumentsHarness, openCase, settled, startDocuments } from './support/documents-harness';
import { EngineStandIn } from './support/engine-stand-in';
import { WebhookReceiver } from './support/webhook-receiver';

const SLOW = 60_000;

describe('Documents: document.translated reaches a subscribed webhook', () => {
  let engine: EngineStandIn;
  let receiver: WebhookReceiver;
  let h: DocumentsHarness;

  beforeAll(async () => {
    engine = await new EngineStandIn().start();
    receiver = await WebhookReceiver.start();
    h = await startDocuments({
      TRANSLATION_ENGINE: 'libretranslate',
      TRANSLATION_ENGINE_URL: engine.url,
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
    });
    h.api.app.get(WebhookTls).ca = receiver.cert;
    h.worker.get(WebhookTls, { strict: false }).ca = receiver.cert;
  }, SLOW);
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
    await engine?.stop();
  }, SLOW);

  it(
    'the worker translates, the outbox row is relayed, and the webhook gets {document_id, case_id, language} signed, never the words',
    async () => {
      const t = await makeTenant(h.api.app);
      const caseId = await openCase(h.db, t.organisationId);
      const path = `/documents-${Math.random().toString(36).slice(2, 10)}`;
      const hook = await h.api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: `https://127.0.0.1${path}`, events: ['document.translated'] });
      expect(hook.status).toBe(201);

      const sent = await h.api
        .http()
        .post('/v1/documents')
        .set(t.auth)
        .send({ case_id: caseId, text: 'Confidential words', source_language: 'en', target_language: 'de' });
      expect(sent.status).toBe(202);
      const id = sent.body.data.id;
      expect((await settled(h.api, t, id)).body.data.state).toBe('translated');

      const [delivery] = await receiver.waitFor(path, 1, 20_000);
      const body = JSON.parse(delivery.raw);
      expect(body).toEqual({
        id: expect.any(String),
        event: 'document.translated',
        occurred_at: expect.stringMatching(/Z$/),
        data: { document_id: id, case_id: caseId, language: 'de' },
      });
      expect(delivery.raw).not.toMatch(/confidential/i);
      expect(verifySignature(delivery.headers['service-signature'] as string, delivery.raw, hook.body.data.secret)).toBe(true);
    },
    SLOW,
  );
});
