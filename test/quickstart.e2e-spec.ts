import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { admin, BuiltProcess, childEnv } from './support/built-processes';
import { dropDatabase, recreateDatabase, withDatabase } from './support/test-db';

/**
 * docs/quickstart.md, followed literally: every curl command in it runs (with bash and curl, as a
 * reader runs it) against a built api and worker set up as `npm run dev` sets them up (the demo
 * tenant and data, Apertium, the local receiver), and every answer must match the one on the page:
 * the same status, the same fields at every level, the same values except those that differ from
 * run to run (ids, times, keys, cursors, addresses). `UPDATE_QUICKSTART=1 npx jest test/quickstart`
 * writes the answers of a run into the page instead.
 */
const ROOT = resolve(__dirname, '..');
const PAGE = join(ROOT, 'docs/quickstart.md');
const ADMIN = join(ROOT, 'dist/apps/admin/src/main.js');
const UPDATE = process.env.UPDATE_QUICKSTART === '1';
const { allowLocalReceiver } = require('../scripts/dev-receiver') as {
  allowLocalReceiver: (env: Record<string, string>, dataDir: string) => Promise<unknown>;
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A piece of the page the test acts on, with where it sits in the text. */
type Piece =
  | { kind: 'call'; command: string }
  | { kind: 'answer'; status: number; start: number; end: number }
  | { kind: 'listen' }
  | { kind: 'receiver-output'; start: number; end: number; text: string }
  | { kind: 'keep'; name: string; path: string }
  | { kind: 'until'; path: string; value: string };

function pieces(page: string): Piece[] {
  const out: Array<Piece & { at: number }> = [];
  for (const m of page.matchAll(/```(\w+)([^\n]*)\n([\s\S]*?)```/g)) {
    const [whole, lang, info, body] = m;
    const at = m.index!;
    const bodyStart = at + whole.indexOf('\n') + 1;
    if (lang === 'json') out.push({ kind: 'answer', status: Number(info.trim()), start: bodyStart, end: bodyStart + body.length, at });
    else if (lang === 'text' && info.trim() === 'receiver')
      out.push({ kind: 'receiver-output', start: bodyStart, end: bodyStart + body.length, text: body, at });
    else if (lang === 'bash' && /^npm run admin -- webhook listen\b/m.test(body)) out.push({ kind: 'listen', at });
    else if (lang === 'bash') {
      const command = body
        .split('\n')
        .filter((line) => !/^export |^npm /.test(line))
        .join('\n')
        .trim();
      if (command.startsWith('curl ')) out.push({ kind: 'call', command, at });
    }
  }
  for (const m of page.matchAll(/<!-- quickstart-keep: (\w+)=(\S+) -->/g)) out.push({ kind: 'keep', name: m[1], path: m[2], at: m.index! });
  for (const m of page.matchAll(/<!-- quickstart-until: (\S+)=(\S+) -->/g)) out.push({ kind: 'until', path: m[1], value: m[2], at: m.index! });
  return out.sort((a, b) => a.at - b.at);
}

const at = (value: Json, path: string): Json =>
  path.split('.').reduce<Json>((v, k) => (v !== null && typeof v === 'object' ? ((v as Record<string, Json>)[k] ?? null) : null), value);

/** Fields whose values differ on every run; their type and presence still must match. */
const VOLATILE_KEY = /(^|_)(id|at|key|secret|cursor|url|four|ms)$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Where the real answer departs from the page, as readable lines (none: they match). */
function differences(page: Json, real: Json, path = ''): string[] {
  const where = path || '(the answer)';
  if (Array.isArray(page) || Array.isArray(real)) {
    if (!Array.isArray(page) || !Array.isArray(real)) return [`${where}: ${JSON.stringify(real)} where the page has ${JSON.stringify(page)}`];
    if (page.length !== real.length) return [`${where}: ${real.length} items where the page has ${page.length}`];
    return page.flatMap((p, i) => differences(p, real[i], `${path}[${i}]`));
  }
  if (page !== null && typeof page === 'object' && real !== null && typeof real === 'object') {
    const keys = [...new Set([...Object.keys(page), ...Object.keys(real)])];
    return keys.flatMap((k) => {
      if (!(k in real)) return [`${path}.${k}: on the page, not in the answer`];
      if (!(k in page)) return [`${path}.${k}: in the answer, not on the page`];
      return differences(page[k], real[k], `${path}.${k}`);
    });
  }
  if (typeof page !== typeof real || (page === null) !== (real === null))
    return [`${where}: ${JSON.stringify(real)} where the page has ${JSON.stringify(page)}`];
  const key = path
    .split('.')
    .pop()!
    .replace(/\[\d+\]$/, '');
  if (page === real || VOLATILE_KEY.test(key) || (typeof page === 'string' && ISO_TIME.test(page) && ISO_TIME.test(real as string))) return [];
  return [`${where}: ${JSON.stringify(real)} where the page has ${JSON.stringify(page)}`];
}

describe('docs/quickstart.md, followed literally against the demo', () => {
  const server = process.env.TEST_DATABASE_SERVER_URL!;
  const database = `${process.env.TEST_DATABASE_NAME}_quickstart`;
  const dataDir = mkdtempSync(join(tmpdir(), 'quickstart-'));
  let env: Record<string, string>;
  let api: BuiltProcess;
  let worker: BuiltProcess;
  let listener: ChildProcess | undefined;
  let listenerOutput = '';
  let key: string;

  beforeAll(async () => {
    expect(spawnSync('curl', ['--version']).status).toBe(0);
    await recreateDatabase(server, database);
    env = {
      NODE_ENV: 'development',
      DATABASE_URL: withDatabase(server, database),
      REDIS_PREFIX: `${process.env.REDIS_PREFIX}quickstart`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      TRANSLATION_ENGINE: 'apertium',
      // The links the api answers name the address a reader of the page uses.
      PUBLIC_BASE_URL: 'https://localhost:8443',
    };
    await allowLocalReceiver(env, dataDir); // as npm run dev
    api = await BuiltProcess.start('api', 'api', { ...env, MIGRATIONS_RUN_ON_START: 'true' });
    await api.ready();
    worker = await BuiltProcess.start('worker', 'worker', env);
    await worker.ready();
    const demo = await admin<{ key: string; organisation_id: string }>(['demo', 'setup'], env);
    await admin(['demo', 'seed', '--org', demo.organisation_id], env);
    key = demo.key;
    writeFileSync(join(dataDir, 'demo.json'), JSON.stringify({ key }));
  }, 180_000);

  afterAll(async () => {
    listener?.kill('SIGINT');
    await Promise.all([api?.stop(), worker?.stop()]);
    await dropDatabase(server, database);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('every call answers what the page shows', async () => {
    let page = readFileSync(PAGE, 'utf8');
    const vars: Record<string, string> = { BASE: api.url, KEY: key };
    const edits: Array<{ start: number; end: number; text: string }> = [];
    const problems: string[] = [];
    let last: { status: number; body: Json } | undefined;
    let until: { path: string; value: string } | undefined;
    let calls = 0;

    const call = async (command: string) => {
      for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 250))) {
        const run = spawnSync('bash', ['-c', `${command} -w '\\n%{http_code}'`], { env: { PATH: process.env.PATH!, ...vars }, encoding: 'utf8' });
        const lines = run.stdout.trimEnd().split('\n');
        const status = Number(lines.pop());
        const body = (lines.join('\n') ? JSON.parse(lines.join('\n')) : null) as Json;
        if (!until || String(at(body, until.path)) === until.value || Date.now() > deadline) return { status, body };
      }
    };

    for (const piece of pieces(page)) {
      if (piece.kind === 'call') {
        last = await call(piece.command);
        calls++;
        until = undefined;
      } else if (piece.kind === 'until') until = piece;
      else if (piece.kind === 'keep') {
        const value = at(last!.body, piece.path);
        expect(typeof value).toBe('string');
        vars[piece.name] = value as string;
      } else if (piece.kind === 'answer') {
        expect(last).toBeDefined();
        if (last!.status !== piece.status) problems.push(`call ${calls}: status ${last!.status} where the page has ${piece.status}`);
        if (UPDATE) edits.push({ start: piece.start, end: piece.end, text: `${JSON.stringify(last!.body, null, 2)}\n` });
        else {
          const shown = JSON.parse(page.slice(piece.start, piece.end)) as Json;
          problems.push(...differences(shown, last!.body).map((d) => `call ${calls}: ${d}`));
        }
      } else if (piece.kind === 'listen') {
        listener = spawn(process.execPath, [ADMIN, 'webhook', 'listen', '--api', api.url], { cwd: ROOT, env: childEnv(env) });
        listener.stderr!.on('data', (d) => (listenerOutput += d));
        for (const end = Date.now() + 30_000; !listenerOutput.includes('Listening on'); await new Promise((r) => setTimeout(r, 100))) {
          if (Date.now() > end || listener.exitCode !== null) throw new Error(`webhook listen did not start:\n${listenerOutput}`);
        }
      } else if (piece.kind === 'receiver-output') {
        // The test event the page's call sent, printed verified.
        const printed = () => [...listenerOutput.matchAll(/^\S+ {2}webhook\.test \S+ {2}signature verified$/gm)].length;
        for (const end = Date.now() + 30_000; printed() < 1 && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
        const lines = listenerOutput.split('\n');
        const first = lines.findIndex((l) => /webhook\.test \S+ {2}signature verified$/.test(l));
        const real = `${lines.slice(first, first + 4).join('\n')}\n    …\n`;
        if (UPDATE) edits.push({ start: piece.start, end: piece.end, text: real });
        else if (piece.text.split('\n')[0].replace(/^\S+ {2}webhook\.test \S+/, '') !== real.split('\n')[0].replace(/^\S+ {2}webhook\.test \S+/, '')) {
          problems.push(`the receiver printed ${JSON.stringify(real.split('\n')[0])}, the page shows ${JSON.stringify(piece.text.split('\n')[0])}`);
        }
        expect(printed()).toBe(1);
      }
    }
    expect(calls).toBe(12);
    if (UPDATE) {
      for (const e of edits.sort((a, b) => b.start - a.start)) page = page.slice(0, e.start) + e.text + page.slice(e.end);
      writeFileSync(PAGE, page);
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
