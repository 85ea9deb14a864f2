import { PeopleAdder } from '@features/people';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { makeTenant, startApi, TestApi } from './support/api';

/** The platform-side commands of the built CLI, run as an operator runs them (`npm test` builds first). */
const ROOT = path.resolve(__dirname, '..');
const MAIN = 'dist/apps/admin/src/main.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function spawnCli(args: string[]): Promise<Run> {
  const { NODE_TLS_REJECT_UNAUTHORIZED: _tls, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** Other engineers rebuild dist/ while specs run: a module missing mid-build is retried once. */
async function cli(args: string[]): Promise<Run> {
  const run = await spawnCli(args);
  if (run.code === 0 || !/Cannot find module/.test(run.stderr)) return run;
  await new Promise((r) => setTimeout(r, 5000));
  return spawnCli(args);
}

/** Runs with --json, expects success and exactly one JSON object on stdout. */
async function json(args: string[]): Promise<Record<string, any>> {
  const run = await cli([...args, '--json']);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

/** A refusal: exit 1, `error: …` on stderr, and with --json the error object on stdout. */
async function refused(args: string[], message: RegExp, code?: string): Promise<void> {
  const run = await cli([...args, '--json']);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/^error: /);
  expect(run.stderr).toMatch(message);
  const body = JSON.parse(run.stdout);
  if (code) expect(body.error.code).toBe(code);
}

const HEX32 = /^[0-9a-f]{32}$/;
const ID = /^\d+$/;
const unique = (name: string) => `${name} ${Math.random().toString(36).slice(2, 8)}`;

jest.setTimeout(120_000);

describe('admin CLI: the platform side', () => {
  let db: Client;
  const newOrg = async () => (await json(['org', 'create', '--name', unique('Platform org')])).id as string;
  const outbox = async (org: string, event: string) =>
    (await db.query('SELECT data FROM outbox_events WHERE organisation_id = $1 AND event = $2 ORDER BY created_at', [org, event])).rows.map((r) => r.data);

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  it('help lists every platform command', async () => {
    const run = await cli(['help']);
    expect(run.code).toBe(0);
    for (const c of [
      'org domain',
      'group create',
      'person add',
      'invitation accept',
      'case open',
      'case close',
      'conversation start',
      'conversation turn',
      'conversation fact',
      'conversation end',
      'conversation summary',
      'demo seed',
    ]) {
      expect(run.stdout).toContain(c);
    }
  });

  it.each([
    [['org', 'domain', '1', 'add'], /missing DOMAIN/],
    [['org', 'domain', '1', 'list', 'example.org'], /unexpected argument/],
    [['org', 'domain', '1', 'verify', 'example.org'], /add\|remove\|list/],
    [['conversation', 'start', '--case', '1', '--languages', 'en'], /two language codes/],
    [['conversation', 'turn', '0123456789abcdef0123456789abcdef', '--speaker', 'A', '--language', 'en', '--text', 'Hi'], /missing --translation/],
    [['case', 'open', '--org', '1'], /missing --ref/],
    [['invitation', 'accept'], /INVITATION/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  describe('org domain', () => {
    it('add, list and remove answer the organisation and its domains', async () => {
      const org = await newOrg();
      const domain = `${Math.random().toString(36).slice(2, 8)}.example.org`;
      expect(await json(['org', 'domain', org, 'list'])).toEqual({ organisation_id: org, domains: [] });
      expect(await json(['org', 'domain', org, 'add', `@${domain.toUpperCase()}`])).toEqual({ organisation_id: org, domains: [domain] });
      expect(await json(['org', 'domain', org, 'add', `b-${domain}`])).toEqual({ organisation_id: org, domains: [`b-${domain}`, domain].sort() });
      expect(await json(['org', 'domain', org, 'remove', `b-${domain}`])).toEqual({ organisation_id: org, domains: [domain] });
      expect((await db.query('SELECT domain FROM organisation_domains WHERE organisation_id = $1', [org])).rows).toEqual([{ domain }]);
    });

    it("removing a domain the organisation has not verified exits 1; so does verifying another organisation's", async () => {
      const [org, other] = [await newOrg(), await newOrg()];
      const domain = `${Math.random().toString(36).slice(2, 8)}.example.org`;
      await refused(['org', 'domain', org, 'remove', domain], /No such verified domain/, 'not_found');
      await json(['org', 'domain', other, 'add', domain]);
      await refused(['org', 'domain', org, 'add', domain], /verified by another organisation/, 'validation_failed');
    });
  });

  describe('group create and person add (operator power)', () => {
    it('a group may hold codes the api cannot grant; a person joins it directly', async () => {
      const org = await newOrg();
      const group = await json(['group', 'create', '--org', org, '--name', 'Owners', '--permissions', 'people.manage,organisation.own']);
      expect(group).toEqual({ id: expect.stringMatching(ID), name: 'Owners', permissions: ['organisation.own', 'people.manage'] });
      const email = `${unique('owner').replace(' ', '.')}@example.net`;
      const added = await json(['person', 'add', '--org', org, '--email', email, '--name', 'Olivia Owner', '--group', group.id]);
      expect(added).toEqual({ id: expect.stringMatching(ID), organisation_id: org, group_id: group.id, joined: true });
      const row = (await db.query('SELECT * FROM people WHERE id = $1', [added.id])).rows[0];
      expect(row).toMatchObject({ email, name: 'Olivia Owner', organisation_id: org, group_id: group.id, disabled: false });
      expect(row.joined_at).toBeInstanceOf(Date);
      // Adding a member again changes nothing.
      expect(await json(['person', 'add', '--org', org, '--email', email.toUpperCase()])).toEqual({ ...added, joined: false });
      expect(await outbox(org, 'user.joined')).toEqual([]);
    });

    it('refuses an unknown code, a taken name, and a member of another organisation', async () => {
      const [org, other] = [await newOrg(), await newOrg()];
      await refused(['group', 'create', '--org', org, '--name', 'Bad', '--permissions', 'people.manage,people.fly'], /people\.fly/, 'unknown_permission');
      await json(['group', 'create', '--org', org, '--name', 'Interpreters']);
      await refused(['group', 'create', '--org', org, '--name', 'interpreters'], /already used/, 'validation_failed');
      const email = `${unique('taken').replace(' ', '.')}@example.net`;
      await json(['person', 'add', '--org', other, '--email', email]);
      await refused(['person', 'add', '--org', org, '--email', email], /another organisation/, 'in_another_organisation');
    });
  });

  describe('case and conversation', () => {
    it('open, the same ref again, a conversation with turns, a fact, end, summary, rewrite, close', async () => {
      const org = await newOrg();
      const opened = await json(['case', 'open', '--org', org, '--ref', 'CRM-7', '--title', 'Housing repair']);
      expect(opened).toEqual({ id: expect.stringMatching(ID), created: true });
      expect(await json(['case', 'open', '--org', org, '--ref', 'CRM-7'])).toEqual({ id: opened.id, created: false });

      const started = await json(['conversation', 'start', '--case', opened.id, '--languages', 'en,pl']);
      expect(started).toEqual({ id: expect.stringMatching(HEX32) });
      const id = started.id as string;
      const turn = ['conversation', 'turn', id, '--speaker', 'Officer', '--language', 'en', '--text', 'Hello.', '--translation', 'Dzień dobry.'];
      expect(await json(turn)).toEqual({ id: expect.stringMatching(ID), seq: 1 });
      const reply = ['conversation', 'turn', id, '--speaker', 'Tenant', '--language', 'pl', '--text', 'Dzień dobry.', '--translation', 'Good morning.'];
      expect(await json(reply)).toEqual({ id: expect.stringMatching(ID), seq: 2 });
      expect(await json(['conversation', 'fact', id, '--label', 'Floor', '--value', '3rd'])).toEqual({ id: expect.stringMatching(ID) });
      expect(await json(['conversation', 'end', id])).toEqual({ id, status: 'ended' });
      expect(await json(['conversation', 'summary', id, '--text', 'Greetings.'])).toEqual({ conversation_id: id, revision: 1 });
      expect(await json(['conversation', 'summary', id, '--text', 'Greetings, twice.'])).toEqual({ conversation_id: id, revision: 2 });
      expect(await json(['case', 'close', opened.id])).toEqual({ id: opened.id, status: 'closed' });

      const turns = (await db.query('SELECT seq, language, translation_language FROM turns WHERE conversation_id = $1 ORDER BY seq', [id])).rows;
      expect(turns).toEqual([
        { seq: 1, language: 'en', translation_language: 'pl' },
        { seq: 2, language: 'pl', translation_language: 'en' },
      ]);
      expect(await outbox(org, 'conversation.ended')).toEqual([{ conversation_id: id }]);
      expect(await outbox(org, 'summary.ready')).toEqual([{ conversation_id: id }, { conversation_id: id }]);
    });

    it('a closed case takes no conversation: exit 1 saying the case is closed', async () => {
      const org = await newOrg();
      const c = await json(['case', 'open', '--org', org, '--ref', 'CRM-8']);
      await json(['case', 'close', c.id]);
      await refused(['conversation', 'start', '--case', c.id, '--languages', 'en,es'], /Case \d+ is closed/, 'case_closed');
      expect((await db.query('SELECT count(*)::int AS n FROM conversations WHERE case_id = $1', [c.id])).rows[0].n).toBe(0);
    });

    it('a turn in a language the conversation does not have exits 1 and adds nothing', async () => {
      const org = await newOrg();
      const c = await json(['case', 'open', '--org', org, '--ref', 'CRM-9']);
      const { id } = await json(['conversation', 'start', '--case', c.id, '--languages', 'en,es']);
      await refused(
        ['conversation', 'turn', id, '--speaker', 'A', '--language', 'fr', '--text', 'Bonjour', '--translation', 'Hola'],
        /language: must be en or es/,
        'validation_failed',
      );
      expect((await db.query('SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1', [id])).rows[0].n).toBe(0);
    });

    it('unknown organisation, case and conversation exit 1', async () => {
      await refused(['case', 'open', '--org', '999999999', '--ref', 'X'], /No such organisation/, 'not_found');
      await refused(['case', 'close', '999999999'], /No such case/, 'not_found');
      await refused(['conversation', 'end', '0123456789abcdef0123456789abcdef'], /No such conversation/, 'not_found');
    });
  });

  describe('with the api running', () => {
    let api: TestApi;
    beforeAll(async () => {
      api = await startApi();
    });
    afterAll(() => api.close());

    it('invitation accept of an api-made invitation makes a member and writes user.joined', async () => {
      const tenant = await makeTenant(api.app);
      const email = `${unique('invitee').replace(' ', '.')}@example.net`;
      const added = await api.app.get(PeopleAdder).add(tenant.organisationId, { email }, 'api', tenant.connectionId);
      if (added.outcome !== 'invited') throw new Error(`expected an invitation, got ${added.outcome}`);
      const accepted = await json(['invitation', 'accept', added.invitation.id, '--name', 'Ines Invitee']);
      expect(accepted).toEqual({
        invitation_id: added.invitation.id,
        person_id: expect.stringMatching(ID),
        organisation_id: tenant.organisationId,
        joined: true,
      });
      expect(await outbox(tenant.organisationId, 'user.joined')).toEqual([{ user_id: accepted.person_id }]);
      const person = (await db.query('SELECT * FROM people WHERE id = $1', [accepted.person_id])).rows[0];
      expect(person).toMatchObject({ email, name: 'Ines Invitee', organisation_id: tenant.organisationId });
      const res = await api.http().get(`/v1/users/${accepted.person_id}`).set(tenant.auth);
      expect(res.status).toBe(200);
      // Accepted once: a second accept is refused.
      await refused(['invitation', 'accept', added.invitation.id], /already been accepted/, 'not_found');
    });

    it('an unknown invitation exits 1', async () => {
      await refused(['invitation', 'accept', '999999999'], /No such invitation/, 'not_found');
    });

    it('demo seed fills the organisation the api then lists; a second seed adds nothing', async () => {
      const demo = await json(['demo', 'setup', '--name', unique('Seeded demo')]);
      const org = demo.organisation_id as string;
      const auth = { Authorization: `Bearer ${demo.key}` };
      const seeded = await json(['demo', 'seed', '--org', org]);
      expect(seeded).toEqual({ organisation_id: org, groups: 4, people: 9, cases: 5, conversations: 6, console_person_id: expect.stringMatching(/^\d+$/) });

      const list = async (url: string) => {
        const res = await api.http().get(url).set(auth);
        expect(res.status).toBe(200);
        return res.body.data as any[];
      };
      expect(await list('/v1/cases')).toHaveLength(5);
      expect((await list('/v1/groups')).map((g) => g.name).sort()).toEqual(['Case workers', 'Integration managers', 'Interpreters', 'People managers']);
      const people = await list('/v1/users');
      expect(people).toHaveLength(9);
      // The integrations manager the console link of `npm run dev` signs in.
      expect(people.find((p) => String(p.id) === seeded.console_person_id)?.name).toBe('Tomás Becker');
      const conversations = await list('/v1/conversations');
      expect(conversations).toHaveLength(6);
      for (const c of conversations) {
        const transcript = await list(`/v1/conversations/${c.id}/transcript`);
        expect(transcript.length).toBeGreaterThanOrEqual(4);
        expect(transcript.length).toBeLessThanOrEqual(8);
        expect((await list(`/v1/conversations/${c.id}/facts`)).length).toBeGreaterThanOrEqual(2);
      }
      const ended = conversations.filter((c) => c.status === 'ended');
      expect(ended.length).toBeGreaterThanOrEqual(4);
      const summary = await api.http().get(`/v1/conversations/${ended[0].id}/summary`).set(auth);
      expect(summary.status).toBe(200);
      expect((await db.query(`SELECT count(*)::int AS n FROM cases WHERE organisation_id = $1 AND status = 'closed'`, [org])).rows[0].n).toBe(1);
      expect((await outbox(org, 'conversation.ended')).length).toBe(ended.length);
      expect((await outbox(org, 'summary.ready')).length).toBeGreaterThanOrEqual(4);

      const counts = async () =>
        (
          await db.query(
            `SELECT (SELECT count(*) FROM groups WHERE organisation_id = $1) AS groups,
                  (SELECT count(*) FROM people WHERE organisation_id = $1) AS people,
                  (SELECT count(*) FROM cases WHERE organisation_id = $1) AS cases,
                  (SELECT count(*) FROM conversations WHERE organisation_id = $1) AS conversations,
                  (SELECT count(*) FROM outbox_events WHERE organisation_id = $1) AS events`,
            [org],
          )
        ).rows[0];
      const before = await counts();
      // Seeded already: nothing added, and the same integrations manager named (npm run dev reuses it).
      expect(await json(['demo', 'seed', '--org', org])).toEqual({
        organisation_id: org,
        groups: 0,
        people: 0,
        cases: 0,
        conversations: 0,
        console_person_id: seeded.console_person_id,
      });
      expect(await counts()).toEqual(before);
    });

    it('demo seed of an unknown organisation exits 1', async () => {
      await refused(['demo', 'seed', '--org', '999999999'], /No such organisation/, 'not_found');
    });
  });
});
