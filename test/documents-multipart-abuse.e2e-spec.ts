import { ChildProcess, spawn } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { makeTenant, startApi, Tenant, TestApi } from './support/api';
import { openCase } from './support/documents-harness';
import { freePort } from './support/private-servers';
import { rawRequest, RawOptions } from './support/raw-tls';

const MAX_FILE = 4096;
const B = 'XB';
const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (content: string, name = 'file') =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${content}`;
const closing = `\r\n--${B}--\r\n`;

/**
 * Multipart bodies no client should send, at the built api as a real process: an unhandled
 * stream error there ends the process (in jest it would end the test run instead of answering).
 * After each one the api still answers, and no document was stored.
 */
describe('POST /v1/documents with broken multipart bodies (the built api as a real process)', () => {
  let api: TestApi;
  let db: DataSource;
  let child: ChildProcess;
  let port: number;
  let output = '';
  let t: Tenant;
  let caseId: string;
  const fields = () => field('case_id', caseId) + field('target_language', 'es');

  beforeAll(async () => {
    api = await startApi();
    db = api.app.get(DataSource);
    t = await makeTenant(api.app);
    caseId = await openCase(db, t.organisationId);
    port = await freePort();
    child = spawn(process.execPath, ['dist/apps/api/src/main.js'], {
      env: { ...process.env, PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DOCUMENT_MAX_FILE_BYTES: String(MAX_FILE) },
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    for (let i = 0; i < 150 && !output.includes('api listening'); i++) await new Promise((r) => setTimeout(r, 100));
    if (!output.includes('api listening')) throw new Error(`the api did not start:\n${output}`);
  }, 30_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await api.close();
  });

  const head = (length: number | 'chunked', extra = '', path = '/v1/documents', type = `multipart/form-data; boundary=${B}`) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.auth.Authorization}\r\nContent-Type: ${type}\r\n${extra}` +
    (length === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`) +
    '\r\n';
  const send = (body: string | Buffer, extra = ''): RawOptions => ({ parts: [head(Buffer.byteLength(body), extra), body] });

  async function stillServing(): Promise<void> {
    expect(child.exitCode).toBeNull();
    const me = await fetch(`https://127.0.0.1:${port}/v1/me`, { headers: t.auth });
    expect(me.status).toBe(200);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM documents WHERE organisation_id = $1`, [t.organisationId]);
    expect(n).toBe(0);
  }

  const answersInEnvelope = (res: { status: number | null; body: string }, status: number, code: string) => {
    expect({ status: res.status, body: JSON.parse(res.body || 'null') }).toEqual({ status, body: { error: { code, message: expect.any(String) } } });
  };

  it('a file part that never ends (the issue): 400 invalid_request, and the process lives', async () => {
    const res = await rawRequest(port, send(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello`));
    answersInEnvelope(res, 400, 'invalid_request');
    await stillServing();
  });

  it('a file part that never ends after valid fields, with Content-Length and chunked', async () => {
    const body = fields() + filePart('hello');
    answersInEnvelope(await rawRequest(port, send(body)), 400, 'invalid_request');
    await stillServing();
    const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    answersInEnvelope(await rawRequest(port, { parts: [head('chunked'), chunked] }), 400, 'invalid_request');
    await stillServing();
  });

  it('a field part, or part headers, that never end: 400 invalid_request', async () => {
    answersInEnvelope(await rawRequest(port, send(`--${B}\r\nContent-Disposition: form-data; name="case_id"\r\n\r\n12`)), 400, 'invalid_request');
    await stillServing();
    answersInEnvelope(await rawRequest(port, send(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="a`)), 400, 'invalid_request');
    await stillServing();
  });

  it('interleaved parts: two file parts, a file part inside a field, a file under another name', async () => {
    const two = fields() + filePart('one') + '\r\n' + filePart('two') + closing;
    expect((await rawRequest(port, send(two))).status).toBe(422);
    await stillServing();
    const twoTruncated = fields() + filePart('one') + '\r\n' + filePart('two never ends');
    const res = await rawRequest(port, send(twoTruncated));
    expect([400, 422]).toContain(res.status);
    await stillServing();
    const nested =
      field('case_id', caseId) +
      `--${B}\r\nContent-Disposition: form-data; name="target_language"\r\nContent-Type: multipart/mixed; boundary=YB\r\n\r\n` +
      `--YB\r\nContent-Disposition: file; filename="b.txt"\r\n\r\nnested, never closed`;
    expect([400, 422]).toContain((await rawRequest(port, send(nested))).status);
    await stillServing();
    const otherName = fields() + filePart('never ends', 'attachment');
    expect([400, 422]).toContain((await rawRequest(port, send(otherName))).status);
    await stillServing();
  });

  it('boundary garbage: no boundary, a wrong boundary, junk after the boundary, no parts at all', async () => {
    const cases: RawOptions[] = [
      { parts: [head(5, '', '/v1/documents', 'multipart/form-data'), 'hello'] },
      send(`--OTHER\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nx\r\n--OTHER--\r\n`),
      send(`--${B}\r\n\x00\x01\x02garbage without headers\r\n\r\n${'\xff'.repeat(100)}`),
      send(`--${B}\r\n${'X-Junk: y\r\n'.repeat(50)}\r\nbody`),
      send(`--${B}--\r\n`),
      send(''.padEnd(2000, '-')),
    ];
    for (const c of cases) {
      const res = await rawRequest(port, c);
      expect([400, 422]).toContain(res.status);
      await stillServing();
    }
  });

  it('oversized: a file over the limit, complete or never ending, declared or not', async () => {
    const big = 'x'.repeat(MAX_FILE * 2);
    expect((await rawRequest(port, send(fields() + filePart(big) + closing))).status).toBe(413);
    await stillServing();
    expect((await rawRequest(port, send(fields() + filePart(big)))).status).toBe(413);
    await stillServing();
    const chunked = fields() + filePart(big);
    const res = await rawRequest(port, { parts: [head('chunked'), `${Buffer.byteLength(chunked).toString(16)}\r\n${chunked}\r\n0\r\n\r\n`] });
    expect(res.status).toBe(413);
    await stillServing();
  });

  it('abruptly closed sockets: mid-headers, mid-field, mid-file, past the limit', async () => {
    const partial = fields() + filePart('half a fi');
    const cut: RawOptions[] = [
      { parts: [head(10_000).slice(0, 40)], then: 'destroy' },
      { parts: [head(10_000), field('case_id', caseId).slice(0, 30)], then: 'destroy' },
      { parts: [head(10_000), partial], then: 'destroy' },
      { parts: [head(10_000), partial], then: 'end' },
      { parts: [head('chunked'), `${Buffer.byteLength(partial).toString(16)}\r\n${partial}\r\n`, 50], then: 'destroy' },
      { parts: [head(100_000), fields() + filePart('x'.repeat(MAX_FILE * 3))], then: 'destroy' },
    ];
    for (const c of cut) {
      await rawRequest(port, { ...c, timeoutMs: 2000 });
      await new Promise((r) => setTimeout(r, 100));
      await stillServing();
    }
  });

  it('compressed bodies that do not decompress, or decompress into a bomb, answer 400 and change nothing', async () => {
    const gz = gzipSync(JSON.stringify({ name: 'never made' }));
    const json = (body: Buffer, path = '/v1/groups') => ({
      parts: [head(body.length, 'Content-Encoding: gzip\r\n', path, 'application/json'), body],
    });
    answersInEnvelope(await rawRequest(port, json(gz.subarray(0, gz.length - 6))), 400, 'invalid_request');
    answersInEnvelope(await rawRequest(port, json(Buffer.from('not gzip at all'))), 400, 'invalid_request');
    answersInEnvelope(await rawRequest(port, json(gzipSync(Buffer.alloc(20 * 1024 * 1024, ' ')))), 400, 'invalid_request');
    const gzMultipart = gzipSync(fields() + filePart('hello') + closing);
    expect([400, 415, 422]).toContain((await rawRequest(port, send(gzMultipart, 'Content-Encoding: gzip\r\n'))).status);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM groups WHERE organisation_id = $1`, [t.organisationId]);
    expect(n).toBe(0);
    await stillServing();
  });

  it('a well-formed upload is still taken (the cases above are refused for what they are)', async () => {
    const body = fields() + filePart('hello world') + closing;
    const res = await rawRequest(port, send(body));
    expect(res.status).toBe(202);
    await db.query(`DELETE FROM documents WHERE organisation_id = $1`, [t.organisationId]).catch(() => undefined);
  });
});
