import { createServer, Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { answerClientErrors } from './client-error';
import { useErrorDialect } from './error-dialect';

/** An interface with its own error schema under /own/ (as SCIM has under /scim/). */
useErrorDialect({
  owns: (url) => /^\/own\//i.test(url),
  jsonMediaTypes: [],
  rateLimit: { policy: 'scim', label: 'Own' },
  answer: (err, status) => ({ status, type: 'application/own+json; charset=utf-8', body: JSON.stringify({ own: String(status), detail: err.message }) }),
});

/** What Node answers before any handler, for a request sent as raw bytes (then left as it is). */
function exchange(server: Server, text: string): Promise<{ head: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const at = got.indexOf('\r\n\r\n');
      resolve({ head: got.slice(0, at), body: JSON.parse(got.slice(at + 4)) });
    });
    socket.setTimeout(5000, () => socket.destroy());
  });
}

describe('answerClientErrors', () => {
  let server: Server;

  beforeAll(async () => {
    // A handler that never reads the body, and short timeouts, so that Node itself gives up.
    server = createServer({ requestTimeout: 400, headersTimeout: 300, connectionsCheckingInterval: 50 }, () => undefined);
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ownError = { own: expect.stringMatching(/^4\d\d$/), detail: expect.any(String) };
  const restError = { error: { code: expect.any(String), message: expect.any(String) } };
  const statusOf = (head: string) => /^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1];

  it('a body that stops arriving under a path with its own error schema (any case): that schema; elsewhere the envelope', async () => {
    for (const path of ['/own/v2/Users', '/OWN/v2/Groups/1']) {
      const res = await exchange(server, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sch`);
      expect(res.head).toMatch(/\r\nContent-Type: application\/own\+json/i);
      expect(res.body).toEqual(ownError);
      expect(statusOf(res.head)).toBe((res.body as { own: string }).own);
    }
    const rest = await exchange(server, 'POST /v1/groups HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na');
    expect(rest.body).toEqual(restError);
  });

  it("a request Node cannot parse: the owning interface's schema when its request line is under its path", async () => {
    expect((await exchange(server, 'GET /own/v2/Users HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n')).body).toEqual(ownError);
    expect((await exchange(server, 'GET /v1/me HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n')).body).toEqual(restError);
  });
});
