import { MIGRATIONS } from '@kernel/database';
import { SCOPES } from '@kernel/core';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { startApi, TestApi } from './support/api';
import { dropDatabase, withDatabase } from './support/test-db';
import { freePort } from './support/private-servers';

/** The built CLI as a real subprocess, as an operator runs it (`npm test` builds first). */
const ROOT = path.resolve(__dirname, '..');
const MAIN = 'dist/apps/admin/src/main.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const { NODE_TLS_REJECT_UNAUTHORIZED: _tls, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { cwd: ROOT, env: { ...inherited, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** Runs with --json, expects success and exactly one JSON object on stdout. */
async function json(args: string[], env: Record<string, string> = {}): Promise<Record<string, any>> {
  const run = await cli([...args, '--json'], env);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const unique = (name: string) => `${name} ${Math.random().toString(36).slice(2, 8)}`;

jest.setTimeout(90_000);

describe('admin CLI', () => {
  let db: Client;
  const newOrg = async () => (await json(['org', 'create', '--name', unique('CLI org')])).id as string;
  const newConnection = async (org: string, scopes = 'all') =>
    (await json(['connection', 'create', '--org', org, '--name', 'CLI connection', '--scopes', scopes])).id as string;
  const orgRow = async (id: string) => (await db.query('SELECT * FROM organisations WHERE id = $1', [id])).rows[0];

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  describe('usage', () => {
    it.each([[[]], [['help']], [['--help']]])('%j prints every command and exits 0', async (args) => {
      const run = await cli(args);
      expect(run.code).toBe(0);
      for (const c of [
        'migrate',
        'org create',
        'org module',
        'org policy',
        'org allowlist',
        'org review',
        'policy publish',
        'connection create',
        'connection scopes',
        'connection revoke',
        'key create',
        'key revoke',
        'key list',
        'demo setup',
      ]) {
        expect(run.stdout).toContain(c);
      }
    });

    it.each([
      [
        ['org', '--help'],
        ['create --name NAME', 'allowlist ORG [CIDR...]'],
      ],
      [
        ['key', 'create', '--help'],
        ['Usage: npm run admin -- key create --connection CONN', '--connection <CONN>', '--json'],
      ],
    ])('%j prints the help of that command only and exits 0', async (args, lines) => {
      const run = await cli(args);
      expect(run.code).toBe(0);
      for (const line of lines) expect(run.stdout).toContain(line);
      expect(run.stdout).not.toContain('connection revoke');
    });

    it.each([
      [['frobnicate'], /unknown command/],
      [['org', 'explode'], /unknown command/],
      [['org', 'create'], /missing --name/],
      [['org', 'module', '1'], /on\|off/],
      [['org', 'module', '1', 'maybe'], /on\|off/],
      [['org', 'create', '--name', 'x', '--colour', 'red'], /--colour/],
      [['key', 'revoke'], /KEY_ID/],
    ])('%j is a usage error: exit 2 and a hint to run help', async (args, message) => {
      const run = await cli(args);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: /);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toContain('help');
    });

    it('with --json a failure is still one JSON object on stdout, the message on stderr', async () => {
      const run = await cli(['org', 'module', '999999999', 'on', '--json']);
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'not_found', message: 'No such organisation.' } });
      expect(run.stderr.trim()).toBe('error: No such organisation.');
    });
  });

  describe('org', () => {
    it('create, module, policy, allowlist and review answer their JSON shapes and change the row', async () => {
      const id = await newOrg();
      expect(id).toMatch(/^\d+$/);
      expect(await json(['org', 'module', id, 'off'])).toEqual({ id, module_enabled: false });
      expect(await json(['org', 'policy', id, 'withdraw'])).toEqual({ id, accepted_policy_version: null });
      const accepted = await json(['org', 'policy', id, 'accept']);
      expect(accepted).toEqual({ id, accepted_policy_version: expect.any(Number) });
      expect(await json(['org', 'allowlist', id, '10.1.2.3/8', '2001:db8::1'])).toEqual({ id, ip_allowlist: ['10.0.0.0/8', '2001:db8::1/128'] });
      expect(await json(['org', 'review', id, 'on'])).toEqual({ id, conversation_review: true });
      const row = await orgRow(id);
      expect(row).toMatchObject({ module_enabled: false, conversation_review: true, ip_allowlist: ['10.0.0.0/8', '2001:db8::1/128'] });
      expect(row.accepted_policy_version).toBe(accepted.accepted_policy_version);
      expect(await json(['org', 'allowlist', id])).toEqual({ id, ip_allowlist: [] });
    });

    it('a bad CIDR exits 1 and leaves the allowlist as it was', async () => {
      const id = await newOrg();
      await json(['org', 'allowlist', id, '192.0.2.0/24']);
      const run = await cli(['org', 'allowlist', id, '198.51.100.0/24', 'not-a-cidr']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: .*not-a-cidr/);
      expect((await orgRow(id)).ip_allowlist).toEqual(['192.0.2.0/24']);
    });

    it('an unknown organisation exits 1', async () => {
      const run = await cli(['org', 'review', '999999999', 'on']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/No such organisation/);
    });
  });

  describe('connection', () => {
    it('create takes all, a list or none; scopes replaces; revoke stamps the time', async () => {
      const org = await newOrg();
      const all = await newConnection(org);
      const none = await newConnection(org, '');
      const some = await newConnection(org, 'users:read,cases:read');
      const scopes = async (id: string) => (await db.query('SELECT scopes FROM connections WHERE id = $1', [id])).rows[0].scopes;
      expect(await scopes(all)).toEqual([...SCOPES].sort());
      expect(await scopes(none)).toEqual([]);
      expect(await scopes(some)).toEqual(['cases:read', 'users:read']);
      expect(await json(['connection', 'scopes', all, '--scopes', 'groups:read'])).toEqual({ id: all, scopes: ['groups:read'] });
      expect(await scopes(all)).toEqual(['groups:read']);
      expect(await json(['connection', 'revoke', none])).toEqual({ id: none, revoked_at: expect.stringMatching(ISO) });
    });

    it('an unknown scope exits 1 and creates nothing', async () => {
      const org = await newOrg();
      const run = await cli(['connection', 'create', '--org', org, '--name', 'Bad', '--scopes', 'cases:read,cases:delete']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: .*cases:delete/);
      expect((await db.query('SELECT count(*)::int AS n FROM connections WHERE organisation_id = $1', [org])).rows[0].n).toBe(0);
    });
  });

  describe('key', () => {
    it('create prints the key once and the database keeps only its SHA-256 and last four', async () => {
      const conn = await newConnection(await newOrg());
      const made = await json(['key', 'create', '--connection', conn]);
      expect(made).toEqual({ id: expect.stringMatching(/^\d+$/), key: expect.stringMatching(/^svc_[0-9a-f]{64}$/) });
      const row = (await db.query('SELECT *, row_to_json(k)::text AS whole FROM api_keys k WHERE id = $1', [made.id])).rows[0];
      expect(row.key_hash).toBe(sha256(made.key));
      expect(row.last_four).toBe(made.key.slice(-4));
      expect(row.whole).not.toContain(made.key);
      expect(row.whole).not.toContain(made.key.slice(4));
    });

    it('a third live key is refused until one is revoked; list shows the states', async () => {
      const conn = await newConnection(await newOrg());
      const first = await json(['key', 'create', '--connection', conn]);
      const second = await json(['key', 'create', '--connection', conn]);
      const third = await cli(['key', 'create', '--connection', conn]);
      expect(third.code).toBe(1);
      expect(third.stderr).toMatch(/^error: .*2 live keys/);
      expect(await json(['key', 'revoke', first.id])).toEqual({ id: first.id, state: 'revoked' });
      const again = await json(['key', 'create', '--connection', conn]);
      const { keys } = await json(['key', 'list', '--connection', conn]);
      expect(keys).toEqual(
        [first, second, again].map((k, i) => ({
          id: k.id,
          last_four: k.key.slice(-4),
          created_at: expect.stringMatching(ISO),
          last_used_at: null,
          state: i === 0 ? 'revoked' : 'live',
        })),
      );
    });

    it('list and create refuse an unknown connection; revoke an unknown key', async () => {
      for (const args of [
        ['key', 'list', '--connection', '999999999'],
        ['key', 'create', '--connection', 'abc'],
        ['key', 'revoke', '999999999'],
      ]) {
        const run = await cli(args);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/^error: No such (connection|key)\./);
      }
    });
  });

  it('demo setup makes an organisation, a connection with every scope and a key', async () => {
    const demo = await json(['demo', 'setup']);
    expect(Object.keys(demo).sort()).toEqual(['connection_id', 'key', 'key_id', 'organisation_id']);
    expect(demo.key).toMatch(/^svc_[0-9a-f]{64}$/);
    expect((await orgRow(demo.organisation_id)).name).toBe('Demo organisation');
    const conn = (await db.query('SELECT * FROM connections WHERE id = $1', [demo.connection_id])).rows[0];
    expect(conn).toMatchObject({ organisation_id: demo.organisation_id, name: 'Demo connection', scopes: [...SCOPES].sort() });
    const named = await json(['demo', 'setup', '--name', 'Named demo']);
    expect((await orgRow(named.organisation_id)).name).toBe('Named demo');
  });

  describe('migrate', () => {
    const server = process.env.TEST_DATABASE_SERVER_URL as string;
    const fresh = `${process.env.TEST_DATABASE_NAME}_cli`;
    const env = () => ({ DATABASE_URL: withDatabase(server, fresh), REDIS_PREFIX: `${process.env.REDIS_PREFIX}cli` });
    afterAll(() => dropDatabase(server, fresh));

    it('applies nothing on the already-migrated test database', async () => {
      expect(await json(['migrate'])).toEqual({ applied: [] });
    });

    it('creates a missing database, migrates it once, publishes a policy version and reverts one at a time', async () => {
      // TypeORM names a migration by its `name` property, else its class name.
      const names = MIGRATIONS.map((M) => (new M() as { name?: string }).name ?? M.name);
      await dropDatabase(server, fresh);
      expect(await json(['migrate'], env())).toEqual({ applied: names });
      expect(await json(['migrate'], env())).toEqual({ applied: [] });
      // Publishing is global, so it runs on this database, not the one the other specs share.
      expect(await json(['policy', 'publish'], env())).toEqual({ version: 2 });
      expect(await json(['policy', 'publish'], env())).toEqual({ version: 3 });
      for (const name of [...names].reverse()) {
        expect(await json(['migrate', '--revert'], env())).toEqual({ reverted: [name] });
      }
      expect(await json(['migrate', '--revert'], env())).toEqual({ reverted: [] });
    });

    describe('--wait: a database server that comes up after the step starts', () => {
      const target = new URL(process.env.DATABASE_URL as string);
      const through = (port: number) => {
        const url = new URL(target);
        url.hostname = '127.0.0.1';
        url.port = String(port);
        return { DATABASE_URL: url.toString(), DATABASE_DIRECT_URL: url.toString() };
      };
      it('waits for a server that starts listening later, then migrates (nothing to apply)', async () => {
        const port = await freePort();
        // A TCP relay to the real server, listening only after the step has met a refused port.
        const relay = net.createServer((client) => {
          const upstream = net.connect(Number(target.port || 5432), target.hostname);
          client.on('error', () => upstream.destroy());
          upstream.on('error', () => client.destroy());
          client.pipe(upstream).pipe(client);
        });
        const run = cli(['migrate', '--wait', '30', '--json'], through(port));
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
        try {
          const done = await run;
          expect(done.code).toBe(0);
          expect(JSON.parse(done.stdout)).toEqual({ applied: [] });
          expect(done.stderr).toMatch(/waiting up to 30 s for the database server \(.*ECONNREFUSED/);
        } finally {
          await new Promise((resolve) => relay.close(resolve));
        }
      });

      it('gives up after the wait with the connection error, and answers at once without --wait', async () => {
        const port = await freePort();
        const waited = await cli(['migrate', '--wait', '1'], through(port));
        expect(waited.code).toBe(1);
        expect(waited.stderr).toMatch(/waiting up to 1 s/);
        expect(waited.stderr).toMatch(/ECONNREFUSED/);
        const at_once = await cli(['migrate'], through(port));
        expect(at_once.code).toBe(1);
        expect(at_once.stderr).not.toMatch(/waiting/);
        expect(at_once.stderr).toMatch(/ECONNREFUSED/);
      });

      it('does not wait on an answer that is not "not up yet" (a wrong password)', async () => {
        const url = new URL(target);
        url.username = 'no_such_role_for_wait';
        const run = await cli(['migrate', '--wait', '30'], { DATABASE_URL: url.toString(), DATABASE_DIRECT_URL: url.toString() });
        expect(run.code).toBe(1);
        expect(run.stderr).not.toMatch(/waiting/);
        expect(run.stderr).toMatch(/no_such_role_for_wait/);
      });

      it.each([['abc'], ['-1'], ['1.5'], ['601']])('--wait %s is a usage error (exit 2)', async (value) => {
        const run = await cli(['migrate', '--wait', value]);
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/--wait takes whole seconds from 0 to 600/);
      });
    });
  });

  describe('against the running api (cross-process cache invalidation)', () => {
    let api: TestApi;
    beforeAll(async () => {
      api = await startApi();
    });
    afterAll(() => api.close());

    it('a key made by the CLI works, and the call right after `key revoke` is refused', async () => {
      const demo = await json(['demo', 'setup']);
      const auth = { Authorization: `Bearer ${demo.key}` };
      for (let i = 0; i < 2; i++) {
        const res = await api.http().get('/v1/me').set(auth);
        expect(res.status).toBe(200);
        expect(res.body.data).toMatchObject({ id: demo.connection_id, key: { id: demo.key_id } });
      }
      await json(['key', 'revoke', demo.key_id]);
      const res = await api.http().get('/v1/me').set(auth);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorised');
    });

    it('control: the api really serves keys from its cache, so only the announcement can refuse them at once', async () => {
      const demo = await json(['demo', 'setup']);
      const auth = { Authorization: `Bearer ${demo.key}` };
      expect((await api.http().get('/v1/me').set(auth)).status).toBe(200);
      // Revoked behind the api's back (no announcement): the cached principal still answers.
      await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [demo.key_id]);
      expect((await api.http().get('/v1/me').set(auth)).status).toBe(200);
      // `key revoke` of an already revoked key still announces it.
      await json(['key', 'revoke', demo.key_id]);
      expect((await api.http().get('/v1/me').set(auth)).status).toBe(401);
    });

    it('org module off and an allowlist from the CLI apply to the next call', async () => {
      const demo = await json(['demo', 'setup']);
      const auth = { Authorization: `Bearer ${demo.key}` };
      expect((await api.http().get('/v1/me').set(auth)).status).toBe(200);
      await json(['org', 'module', demo.organisation_id, 'off']);
      const off = await api.http().get('/v1/me').set(auth);
      expect([off.status, off.body.error.code]).toEqual([403, 'module_off']);
      await json(['org', 'module', demo.organisation_id, 'on']);
      expect((await api.http().get('/v1/me').set(auth)).status).toBe(200);
      await json(['org', 'allowlist', demo.organisation_id, '192.0.2.0/24']);
      const outside = await api.http().get('/v1/me').set(auth);
      expect([outside.status, outside.body.error.code]).toEqual([403, 'ip_not_allowed']);
    });
  });
});
