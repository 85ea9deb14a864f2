import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './support/private-servers';

const ROOT = resolve(__dirname, '..');
/** Every live descendant of `pid` (children, grandchildren: Postgres's backends included). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {} // gone meanwhile
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length;) {
    const next = [...parent].filter(([, ppid]) => frontier.includes(ppid)).map(([p]) => p);
    found.push(...next);
    frontier = next;
  }
  return found;
}

const alive = (pid: number) => {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); // a zombie has stopped
  } catch {
    return false;
  }
};

/** With no TRANSLATION_ENGINE set, the demo's documents are translated by Apertium (installed by the test command). */
async function expectDemoTranslates(output: string) {
  expect(output).toMatch(/Translation {3}apertium: the apertium command \(pairs: [^)]*eng-spa/);
  const base = /curl -k (https:\/\/\S+?)\/v1\/me/.exec(output)![1];
  const auth = { Authorization: `Bearer ${/key {11}(svc_\S+)/.exec(output)![1]}` };
  const cases = (await (await fetch(`${base}/v1/cases?limit=1`, { headers: auth })).json()) as { data: { id: string }[] };
  const sent = await fetch(`${base}/v1/documents`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ case_id: cases.data[0].id, text: 'The cat is black.', source_language: 'en', target_language: 'es' }),
  });
  expect(sent.status).toBe(202);
  const { id } = ((await sent.json()) as { data: { id: string } }).data;
  let doc: { state: string; translation?: { content: string } } = { state: 'queued' };
  for (const until = Date.now() + 60_000; ['queued', 'translating'].includes(doc.state) && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 250));
    doc = ((await (await fetch(`${base}/v1/documents/${id}`, { headers: auth })).json()) as { data: typeof doc }).data;
  }
  expect(doc).toMatchObject({ state: 'translated', translation: { content: 'El gato es negro.' } });
}

describe('`npm run dev` stops everything it started when the npm process is signalled (as on Ctrl-C)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dev-signals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // SIGTERM npm passes on; SIGHUP (a closed terminal, `kill -HUP`) it does not, and dies alone.
  it.each(['SIGTERM', 'SIGHUP'] as const)(
    '%s: npm, dev, api, worker, embedded Postgres and redis-server are all gone',
    async (signal) => {
      chmodSync(dir, 0o755); // the embedded Postgres runs as the postgres user when we are root
      const [port, workerPort, pgPort, redisPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
      // DEV_EMBEDDED: its own Postgres and redis-server on these ports; the shared servers are never asked.
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? dir,
        DATA_DIR: join(dir, '.data'),
        HOST: '127.0.0.1',
        PORT: String(port),
        WORKER_HEALTH_PORT: String(workerPort),
        METRICS_PORT: '0',
        DEV_POSTGRES_PORT: String(pgPort),
        DEV_REDIS_PORT: String(redisPort),
        DEV_EMBEDDED: '1',
        SHUTDOWN_GRACE_MS: '5000',
        LOG_LEVEL: 'warn',
        DATABASE_URL: '',
        REDIS_URL: '', // empty beats a .env in the checkout: dev's own servers, nothing else
      };
      const dev = spawn('npm', ['run', 'dev'], { cwd: ROOT, env });
      let output = '';
      dev.stdout.on('data', (d) => (output += d));
      dev.stderr.on('data', (d) => (output += d));
      const exited = new Promise<void>((r) => dev.once('exit', () => r()));
      for (const until = Date.now() + 150_000; !output.includes('Integrations API is running') && Date.now() < until && dev.exitCode === null;) {
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(output).toContain('Integrations API is running');
      // Beside the curl line, a console link for the demo integrations manager: it opens the sign-in button page.
      const link = /https:\/\/\S+\/console\/sign-in\/link\?token=[A-Za-z0-9_-]+/.exec(output)?.[0];
      expect(link).toBeDefined();
      const linkPage = await fetch(link!);
      expect(linkPage.status).toBe(200);
      expect(await linkPage.text()).toContain('This link signs you in to your organisation');
      if (signal === 'SIGTERM') await expectDemoTranslates(output);
      const started = descendants(dev.pid!);
      const commands = started.map((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8'));
      expect(commands.some((c) => c.includes('dist/apps/api/src/main.js'))).toBe(true);
      expect(commands.some((c) => c.includes('dist/apps/worker/src/main.js'))).toBe(true);
      expect(commands.some((c) => c.startsWith('redis-server'))).toBe(true);
      expect(commands.some((c) => /postgres/.test(c) && c.includes(String(pgPort)))).toBe(true);

      dev.kill(signal);
      const until = Date.now() + 20_000;
      while ((alive(dev.pid!) || started.some(alive)) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      const left = [dev.pid!, ...started].filter(alive);
      for (const p of left) process.kill(p, 'SIGKILL'); // never leave them behind, even when failing
      expect(left).toEqual([]);
      await exited;
    },
    200_000,
  );
});
