import { ChildProcess, spawn } from 'node:child_process';
import { makeTenant, startApi, TestApi } from './support/api';
import { freePort } from './support/private-servers';

describe('logs (the built api as a real process)', () => {
  let api: TestApi;
  let child: ChildProcess;
  let output = '';
  let port: number;

  beforeAll(async () => {
    api = await startApi();
    port = await freePort();
    child = spawn(process.execPath, ['dist/apps/api/src/main.js'], {
      env: { ...process.env, PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug', NODE_ENV: 'development' },
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    // A busy machine may take a while to start a second api; the hook says so instead of timing out silently.
    for (let i = 0; i < 600 && !output.includes('api listening'); i++) await new Promise((r) => setTimeout(r, 100));
    if (!output.includes('api listening')) throw new Error(`the built api did not start within 60 s:\n${output}`);
  }, 90_000);

  afterAll(async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await api.close();
  });

  it('are JSON lines with the request id, and never contain a key or an Authorization header', async () => {
    const t = await makeTenant(api.app);
    const base = `https://127.0.0.1:${port}`;
    const ok = await fetch(`${base}/v1/me`, { headers: { Authorization: `Bearer ${t.key}`, 'X-Request-Id': 'trace-logging-0001' } });
    expect(ok.status).toBe(200);
    await fetch(`${base}/v1/me?access_token=${t.key}`);
    await fetch(`${base}/v1/me`, { headers: { Authorization: `Bearer svc_${'e'.repeat(64)}` } });
    await new Promise((r) => setTimeout(r, 300));

    const lines = output.split('\n').filter((l) => l.trim().startsWith('{'));
    expect(lines.length).toBeGreaterThan(3);
    const requestLine = lines.map((l) => JSON.parse(l)).find((l) => l.request?.id === 'trace-logging-0001');
    expect(requestLine).toMatchObject({ request: { method: 'GET', path: '/v1/me' }, response: { status: 200 }, responseTime: expect.any(Number) });
    expect(output).not.toContain(t.key);
    expect(output).not.toContain(t.key.slice(4));
    expect(output).not.toContain('e'.repeat(64));
    expect(output.toLowerCase()).not.toContain('"authorization"');
  });

  it('exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = spawn(process.execPath, ['-e', '0']); // afterAll kills this stand-in
  });
});
