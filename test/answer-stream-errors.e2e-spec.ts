import { AddressPolicy, HostResolver, WebhookSender, WebhookTls } from '@features/webhooks';
import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { callEngine, TranslationEngineError } from '@features/documents';
import { receiverTls } from './support/webhook-receiver';

/**
 * Answers whose body stream fails half-way (the other side sends its headers, a little of the
 * body, then drops the connection): each is a failure the caller logs and retries, never an
 * unhandled stream error. Binds 127.0.0.1:443: run under `flock /tmp/ia-443.lock`.
 */
describe('answer streams that fail mid-body', () => {
  const cutAfterHeaders = (res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"translations": [');
    setTimeout(() => res.socket?.destroy(), 20);
  };

  describe('a translation engine', () => {
    let server: HttpServer;
    let url: string;
    beforeAll(async () => {
      server = createHttpServer((req, res) => {
        if (req.url !== '/endless') return cutAfterHeaders(res);
        // An answer past the size limit (70 MB, sent as fast as it is read).
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 'x');
        let sent = 0;
        const more = () => {
          while (sent < 70 && !res.destroyed) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/translate`;
    });
    afterAll(() => new Promise((r) => server.close(r)));

    it('is a transient engine failure (retried), not a crash', async () => {
      const call = callEngine({ engine: 'Stand-in', method: 'POST', url, body: '{}', timeoutMs: 2000 });
      await expect(call).rejects.toBeInstanceOf(TranslationEngineError);
      await expect(call).rejects.toMatchObject({ message: expect.stringContaining('could not be reached') });
    });

    it('an answer past the size limit is refused unread, not held in memory', async () => {
      const call = callEngine({ engine: 'Stand-in', method: 'POST', url: url.replace('/translate', '/endless'), body: '{}', timeoutMs: 5000 });
      await expect(call).rejects.toMatchObject({ message: expect.stringContaining('answered more than 64 MB') });
    });
  });

  describe('a webhook receiver', () => {
    let server: HttpsServer;
    let sender: WebhookSender;
    beforeAll(async () => {
      const tls = await receiverTls();
      server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
        req.resume();
        cutAfterHeaders(res);
      });
      await new Promise<void>((r) => server.listen(443, '127.0.0.1', r));
      const resolver = { resolve: async () => [{ address: '127.0.0.1', family: 4 }] } as unknown as HostResolver;
      const policy = { problem: () => null } as unknown as AddressPolicy;
      const webhookTls = new WebhookTls();
      webhookTls.ca = tls.cert;
      sender = new WebhookSender(resolver, policy, webhookTls);
    });
    afterAll(async () => {
      await sender.onApplicationShutdown();
      await new Promise((r) => server.close(r));
    });

    it('is a failed attempt with the reason, not a crash', async () => {
      const result = await sender.send({ url: 'https://127.0.0.1/hook', body: '{}', secret: 'whsec_x', timestamp: 1 });
      expect(result).toMatchObject({ ok: false, error: expect.any(String) });
      expect(result.error).not.toBe('');
    });
  });
});
