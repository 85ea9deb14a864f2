import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { DataSource, QueryRunner } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { scimTenant } from './support/scim-client';
import { OpenApiChecker } from './support/openapi-check';
import { until } from './support/until';

type Res = { status: number; body: any };
type Item = { id: string; updated_at: string; created_at: string; joined_at?: string };

const LISTS = ['/v1/cases', '/v1/conversations', '/v1/groups', '/v1/users', '/v1/invitations'] as const;
type List = (typeof LISTS)[number];
const EPOCH = '1970-01-01T00:00:00.000Z';
const OTHER_QUERY = 'cursor: was issued for another updated_since; send the same updated_since as the page that gave it, or start again without a cursor.';

/** The list's order key: newest first by joined_at for people, by created_at for the rest; then id. */
const orderKey = (path: List, i: Item): [string, string] => [path === '/v1/users' ? i.joined_at! : i.created_at, i.id];
const newestFirst = (path: List, a: Item, b: Item) => {
  const [ka, kb] = [orderKey(path, a), orderKey(path, b)];
  return ka[0] !== kb[0] ? (ka[0] < kb[0] ? 1 : -1) : ka[1] === kb[1] ? 0 : BigInt(`0x${ka[1]}`) < BigInt(`0x${kb[1]}`) ? 1 : -1;
};
const later = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);
const plusMs = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

/**
 * Incremental sync: the five lists a partner mirrors take `updated_since`, every object carries
 * `updated_at`, and a client that keeps the highest `updated_at` it has seen and walks again from
 * it (inclusive) ends with a copy equal to the server's, however writes interleave with its walks
 * and whatever order their transactions commit in.
 */
describe('incremental sync (updated_since)', () => {
  const { api, t } = useApi({ tenant: true });
  let db: DataSource;
  let checker: OpenApiChecker;
  let cases: CasesService;
  let ingest: ConversationIngestService;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    db = api.app.get(DataSource);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
    cases = api.app.get(CasesService);
    ingest = api.app.get(ConversationIngestService);
  });

  const get = (tenant: Tenant, path: string): Promise<Res> => api.http().get(path).set(tenant.auth) as unknown as Promise<Res>;
  const send = (tenant: Tenant, method: 'post' | 'patch' | 'put', path: string, body: object): Promise<Res> =>
    api.http()[method](path).set(tenant.auth).send(body) as unknown as Promise<Res>;

  /** Every page of one walk, each checked against the description; the walk's items in the list's order. */
  async function walk(tenant: Tenant, path: List, since: string | null, limit = 3): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ limit: String(limit) });
      if (since !== null) q.set('updated_since', since);
      if (cursor) q.set('cursor', cursor);
      const res = await get(tenant, `${path}?${q}`);
      expect({ path, status: res.status, error: res.body.error }).toEqual({ path, status: 200, error: undefined });
      checker.check('GET', path, 200, res.body);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
    } while (cursor);
    // Newest first, each item once, as without updated_since.
    expect(items.map((i) => i.id)).toEqual([...items].sort((a, b) => newestFirst(path, a, b)).map((i) => i.id));
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    return items;
  }

  /** The client the partner docs describe: one copy per list, the highest updated_at seen, walks from it. */
  class Mirror {
    readonly copy = new Map<string, Item>();
    since = EPOCH;
    walks = 0;
    constructor(
      readonly tenant: Tenant,
      readonly path: List,
    ) {}
    async sync(limit = 3): Promise<Item[]> {
      const items = await walk(this.tenant, this.path, this.since, limit);
      for (const i of items) {
        this.copy.set(i.id, i);
        this.since = later(this.since, i.updated_at);
      }
      this.walks++;
      return items;
    }
  }

  const server = async (tenant: Tenant, path: List) => new Map((await walk(tenant, path, null, 100)).map((i) => [i.id, i] as const));
  const openCase = async (tenant: Tenant) => (await send(tenant, 'post', '/v1/cases', { external_ref: `REF-${rand()}` })).body.data as Item;
  const startConversation = async (tenant: Tenant) => ingest.start((await openCase(tenant)).id, 'en', 'es');
  const group = async (tenant: Tenant) => {
    const res = await send(tenant, 'post', '/v1/groups', { name: `Group ${rand()}` });
    expect(res.status).toBe(201);
    return res.body.data as Item & { name: string };
  };
  const person = async (tenant: Tenant) => {
    const [row] = await db.query(`INSERT INTO people (email, name, organisation_id, joined_at) VALUES ($1, 'Seeded', $2, now()) RETURNING id`, [
      `p-${rand()}@seed.example`,
      tenant.organisationId,
    ]);
    return String(row.id);
  };
  const invite = async (tenant: Tenant) => {
    const res = await send(tenant, 'post', '/v1/users', { email: `inv-${rand()}@elsewhere.example` });
    expect(res.status).toBe(202);
    return res.body.data as Item;
  };
  const read = async (tenant: Tenant, path: string) => (await get(tenant, path)).body.data as Item & Record<string, unknown>;
  /**
   * Until every change made so far can be listed: the horizon a walk would take now is past the
   * database's clock at the call. A walk shows a change once no transaction that began before it is
   * still running (a statement of the api's own, under load, can take a moment).
   */
  const settled = async () => {
    const [{ t }] = await db.query(`SELECT clock_timestamp() AS t`);
    await until(async () => (await db.query(`SELECT sync_horizon() > $1 AS ok`, [t]))[0].ok, 'the sync horizon to pass the changes made');
  };
  /** A transaction of its own, kept open until the test commits it. */
  const held = async (): Promise<QueryRunner> => {
    const qr = db.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    return qr;
  };

  describe('the parameter', () => {
    it('narrows each list to what changed at or after the time (inclusive), in the same order, and is described', async () => {
      const tenant = await makeTenant(api.app);
      const before = { cases: [await openCase(tenant), await openCase(tenant)], groups: [await group(tenant), await group(tenant)] };
      const since = (await walk(tenant, '/v1/groups', null)).map((g) => g.updated_at).reduce(later);
      // Made or changed after `since`: the one case changed, a new case and a new group.
      await new Promise((r) => setTimeout(r, 2));
      await cases.close(before.cases[0].id);
      const fresh = { case: await openCase(tenant), group: await group(tenant) };
      await settled();
      const changed = await walk(tenant, '/v1/cases', plusMs(since, 1), 1);
      expect(changed.map((c) => c.id)).toEqual([fresh.case.id, before.cases[0].id]);
      expect((await walk(tenant, '/v1/groups', plusMs(since, 1))).map((g) => g.id)).toEqual([fresh.group.id]);
      // Inclusive: asked from an item's own updated_at, the item is listed.
      const closed = changed[1];
      expect((await walk(tenant, '/v1/cases', closed.updated_at)).map((c) => c.id)).toContain(closed.id);
      expect((await walk(tenant, '/v1/cases', plusMs(closed.updated_at, 1))).map((c) => c.id)).not.toContain(closed.id);
      // Every list takes it, with any offset; the description names it on each.
      const doc = (await api.http().get('/v1/openapi.json')).body;
      for (const path of LISTS) {
        expect((await get(tenant, `${path}?updated_since=${encodeURIComponent('2026-01-01T01:00:00+01:00')}`)).status).toBe(200);
        const param = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'updated_since');
        expect(param).toMatchObject({ in: 'query', required: false, schema: { type: 'string', format: 'date-time' } });
        expect(param.description ?? param.schema.description).toMatch(/highest `updated_at`/);
      }
    });

    it.each([
      ['not a time', 'yesterday'],
      ['no offset', '2026-11-27T08:00:00'],
      ['a day that does not exist', '2026-02-30T08:00:00Z'],
      ['24:00', '2026-11-27T24:00:00Z'],
      ['an empty value', ''],
      ['year 0000', '0000-01-01T00:00:00Z'],
      ['a time in year 10000 by its offset', '9999-12-31T23:30:00-01:00'],
    ])('refuses %s with 400 invalid_request, on every list', async (_, value) => {
      for (const path of LISTS) {
        const res = await get(t, `${path}?updated_since=${encodeURIComponent(value)}`);
        expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 400, code: 'invalid_request' });
        expect(res.body.error.message).toMatch(/^updated_since/);
        checker.check('GET', path, 400, res.body);
      }
    });

    it('a cursor serves only the walk it was issued for: not another updated_since, nor none, nor the other way round', async () => {
      const tenant = await makeTenant(api.app);
      for (let i = 0; i < 3; i++) await group(tenant);
      // A walk lists nothing newer than a transaction still running (another spec's, in this database).
      await settled();
      const within = (await get(tenant, `/v1/groups?limit=1&updated_since=${EPOCH}`)).body.next_cursor as string;
      const plain = (await get(tenant, '/v1/groups?limit=1')).body.next_cursor as string;
      expect((await get(tenant, `/v1/groups?limit=1&updated_since=${EPOCH}&cursor=${within}`)).status).toBe(200);
      for (const path of [
        `/v1/groups?limit=1&updated_since=2026-01-01T00:00:00Z&cursor=${within}`,
        `/v1/groups?limit=1&cursor=${within}`,
        `/v1/groups?limit=1&updated_since=${EPOCH}&cursor=${plain}`,
        // A list without updated_since at all (webhooks) refuses a walk's cursor too.
        `/v1/webhooks?limit=1&cursor=${within}`,
      ]) {
        const res = await get(tenant, path);
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: { error: { code: 'invalid_request', message: OTHER_QUERY } } });
      }
      // The same instant written another way is the same walk.
      expect((await get(tenant, `/v1/groups?limit=1&updated_since=${encodeURIComponent('1970-01-01T01:00:00+01:00')}&cursor=${within}`)).status).toBe(200);
    });
  });

  describe('what moves updated_at', () => {
    /** The object's updated_at moved, and a walk from just after its previous value lists it. */
    const moved = async (tenant: Tenant, list: List, path: string, before: Item, what: string) => {
      await settled();
      const now = await read(tenant, path);
      expect({ what, later: Date.parse(now.updated_at) > Date.parse(before.updated_at) }).toEqual({ what, later: true });
      expect({ what, listed: (await walk(tenant, list, plusMs(before.updated_at, 1))).some((i) => i.id === before.id) }).toEqual({ what, listed: true });
      return now;
    };
    const tick = () => new Promise((r) => setTimeout(r, 2));

    it('a person: name, job title, group, disabled; not a PATCH that changes nothing', async () => {
      const tenant = await makeTenant(api.app);
      const [g1, g2] = [await group(tenant), await group(tenant)];
      const id = await person(tenant);
      let p = await read(tenant, `/v1/users/${id}`);
      expect(p.updated_at).toEqual(expect.stringMatching(/Z$/));
      for (const change of [{ name: 'Renamed' }, { job_title: 'Coordinator' }, { group_id: g1.id }, { disabled: true }, { group_id: g2.id }]) {
        await tick();
        expect((await send(tenant, 'patch', `/v1/users/${id}`, change)).status).toBe(200);
        p = await moved(tenant, '/v1/users', `/v1/users/${id}`, p, JSON.stringify(change));
      }
      await tick();
      expect((await send(tenant, 'patch', `/v1/users/${id}`, { name: 'Renamed', disabled: true })).body.data.updated_at).toBe(p.updated_at);
    });

    it('a group: renamed, permissions set, a member joining, moving out or leaving', async () => {
      const tenant = await makeTenant(api.app);
      const [g, other] = [await group(tenant), await group(tenant)];
      const id = await person(tenant);
      let now: Item = await read(tenant, `/v1/groups/${g.id}`);
      const steps: Array<[string, () => Promise<unknown>]> = [
        ['renamed', () => send(tenant, 'patch', `/v1/groups/${g.id}`, { name: `Renamed ${rand()}` })],
        ['permissions set', () => send(tenant, 'put', `/v1/groups/${g.id}/permissions`, { permissions: ['documents.send'] })],
        ['a member joined', () => send(tenant, 'patch', `/v1/users/${id}`, { group_id: g.id })],
        ['a member moved to another group', () => send(tenant, 'patch', `/v1/users/${id}`, { group_id: other.id })],
        ['a member joined again', () => send(tenant, 'patch', `/v1/users/${id}`, { group_id: g.id })],
        ['a member left the organisation', () => api.http().delete(`/v1/users/${id}`).set(tenant.auth)],
      ];
      for (const [what, step] of steps) {
        await tick();
        const res = (await step()) as Res;
        expect({ what, ok: res.status < 300 }).toEqual({ what, ok: true });
        now = await moved(tenant, '/v1/groups', `/v1/groups/${g.id}`, now, what);
      }
    });

    it('a conversation: a turn, a fact, its summary written and rewritten, ending', async () => {
      const tenant = await makeTenant(api.app);
      const c = await startConversation(tenant);
      const path = `/v1/conversations/${c.id}`;
      let now: Item = await read(tenant, path);
      const steps: Array<[string, () => Promise<unknown>]> = [
        ['a turn', () => ingest.appendTurn(c.id, { speaker: 'caseworker', language: 'en', text: 'Hello.', translation: 'Hola.' })],
        ['a fact', () => ingest.recordFact(c.id, 'Topic', 'Housing')],
        ['a summary written', () => ingest.writeSummary(c.id, 'First.')],
        ['a summary rewritten', () => ingest.writeSummary(c.id, 'Second.')],
        ['ending', () => ingest.end(c.id)],
      ];
      for (const [what, step] of steps) {
        await tick();
        await step();
        now = await moved(tenant, '/v1/conversations', path, now, what);
      }
    });

    it('a case: closed', async () => {
      const tenant = await makeTenant(api.app);
      const c = await openCase(tenant);
      await tick();
      await cases.close(c.id);
      const closed = await moved(tenant, '/v1/cases', `/v1/cases/${c.id}`, c, 'closed');
      expect(closed).toMatchObject({ status: 'closed' });
    });

    it('an invitation: its details changed, and passing expires_at (then updated_at is expires_at, listed by the walk that covers it)', async () => {
      const tenant = await makeTenant(api.app);
      const inv = await invite(tenant);
      await tick();
      await db.query(`UPDATE invitations SET job_title = 'Interpreter' WHERE id = $1`, [inv.id]);
      await settled();
      const [changed] = (await walk(tenant, '/v1/invitations', plusMs(inv.updated_at, 1))).filter((i) => i.id === inv.id);
      expect(changed).toMatchObject({ job_title: 'Interpreter', status: 'pending' });
      // Expiry writes nothing: it is a change at expires_at all the same. The last write is before it.
      const [[{ at, written }]] = await db.query(
        `UPDATE invitations SET expires_at = now() + interval '200 milliseconds' WHERE id = $1 RETURNING expires_at AS at, updated_at AS written`,
        [inv.id],
      );
      const expiresAt = (at as Date).toISOString();
      expect((written as Date).getTime()).toBeLessThan(Date.parse(expiresAt));
      await until(async () => (await db.query(`SELECT clock_timestamp() > $1 AS ok`, [expiresAt]))[0].ok, 'expires_at to pass');
      await settled();
      const expired = (await walk(tenant, '/v1/invitations', plusMs((written as Date).toISOString(), 1))).find((i) => i.id === inv.id);
      expect(expired).toMatchObject({ status: 'expired', updated_at: expiresAt });
      expect((await walk(tenant, '/v1/invitations', plusMs(expiresAt, 1))).map((i) => i.id)).not.toContain(inv.id);
    });
  });

  describe('the horizon', () => {
    /**
     * The case a highest-seen-time client cannot survive on its own: a change written early
     * (updated_at t1) commits after a later one (t2 > t1) was listed. A walk shows nothing changed
     * at or after the start of a transaction still running, so its watermark stays below t1.
     */
    async function lateCommit(tenant: Tenant): Promise<{ mirror: Mirror; early: string; late: string }> {
      const early = await person(tenant);
      const late = await person(tenant);
      const mirror = new Mirror(tenant, '/v1/users');
      await settled();
      await mirror.sync();
      const qr = await held();
      try {
        await qr.query(`UPDATE people SET job_title = 'Written first, committed last' WHERE id = $1`, [early]);
        await new Promise((r) => setTimeout(r, 2));
        expect((await send(tenant, 'patch', `/v1/users/${late}`, { job_title: 'Written last, committed first' })).status).toBe(200);
        await mirror.sync();
        await qr.commitTransaction();
      } finally {
        if (qr.isTransactionActive) await qr.rollbackTransaction();
        await qr.release();
      }
      await settled();
      await mirror.sync();
      return { mirror, early, late };
    }

    it('holds a walk below every transaction still running, so a change that commits late is listed by the next walk', async () => {
      const tenant = await makeTenant(api.app);
      const { mirror, early, late } = await lateCommit(tenant);
      expect(mirror.copy.get(early)).toMatchObject({ job_title: 'Written first, committed last' });
      expect(mirror.copy.get(late)).toMatchObject({ job_title: 'Written last, committed first' });
      expect(mirror.copy).toEqual(await server(tenant, '/v1/users'));
    });

    it('control: with the clock alone as the horizon, the same client misses the late commit (so the test above can fail)', async () => {
      const tenant = await makeTenant(api.app);
      const [{ def }] = await db.query(`SELECT pg_get_functiondef('sync_horizon()'::regprocedure) AS def`);
      await db.query(
        `CREATE OR REPLACE FUNCTION sync_horizon() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$ SELECT date_trunc('milliseconds', clock_timestamp()) $$`,
      );
      try {
        const { mirror, early } = await lateCommit(tenant);
        expect(mirror.copy.get(early)?.['job_title' as keyof Item]).not.toBe('Written first, committed last');
        expect(mirror.copy).not.toEqual(await server(tenant, '/v1/users'));
      } finally {
        await db.query(def);
      }
    });
  });

  describe("a group's row, written when its members change", () => {
    /**
     * Adding a person into a group, moving one in or out and deleting the group all write the
     * group's row (its updated_at, by the trigger on people). Calls that read the group first and
     * write it afterwards must not hold a lock another one needs to write it: the losers of such a
     * cycle would be aborted by Postgres (40P01) and answered 500.
     */
    it('concurrent adds into one group, moves in and out of it, and its deletion all answer (no deadlock)', async () => {
      const tenant = await scimTenant(api);
      const [target, other] = [await group(tenant), await group(tenant)];
      const movers: string[] = [];
      for (let i = 0; i < 4; i++) movers.push(await person(tenant));
      const answers: Array<{ what: string; status: number; code?: string }> = [];
      const record = (what: string) => (res: Res) => answers.push({ what, status: res.status, code: res.body?.error?.code });
      const calls: Array<Promise<unknown>> = [];
      for (let i = 0; i < 8; i++) {
        calls.push(send(tenant, 'post', '/v1/users', { email: `add-${i}-${rand()}@${tenant.domain}`, group_id: target.id }).then(record('add')));
      }
      for (const [i, id] of movers.entries()) {
        const to = i % 2 === 0 ? target : other;
        calls.push(send(tenant, 'patch', `/v1/users/${id}`, { group_id: to.id }).then(record('move')));
      }
      calls.push((api.http().delete(`/v1/groups/${target.id}`).set(tenant.auth) as unknown as Promise<Res>).then(record('delete')));
      await Promise.all(calls);
      // Each call either did its work or met the group already deleted (422 naming group_id).
      const failed = answers.filter((a) => !(a.status < 300 || (a.what !== 'delete' && a.status === 422 && a.code === 'validation_failed')));
      expect(failed).toEqual([]);
      expect(answers.find((a) => a.what === 'delete')).toMatchObject({ status: 204 });
    });
  });

  it('a client syncing repeatedly while changes are made concurrently ends with a copy equal to the server, every object at its latest version', async () => {
    const tenant = await makeTenant(api.app);
    const groups = await Promise.all(Array.from({ length: 3 }, () => group(tenant)));
    const people: string[] = [];
    for (let i = 0; i < 8; i++) people.push(await person(tenant));
    const caseIds = [(await openCase(tenant)).id, (await openCase(tenant)).id];
    const conversations = [(await startConversation(tenant)).id, (await startConversation(tenant)).id];
    await invite(tenant);
    // The rows the held transactions write, and no other writer does. A held transaction keeps its
    // connection until it commits, and it commits only after the client has walked; a writer waiting
    // on one of its row locks would keep a connection too (behind PgBouncer in transaction mode, a
    // server connection of a small pool), and enough of them leave no connection for the walks that
    // the held transaction waits for. Rows of their own keep the held transactions to one lock each
    // way: nobody waits on them, and they still write early and commit late on every kind they touch.
    const heldOnly = {
      people: [await person(tenant), await person(tenant)],
      groups: [await group(tenant), await group(tenant)],
      cases: [(await openCase(tenant)).id, (await openCase(tenant)).id],
    };

    const mirrors = LISTS.map((path) => new Mirror(tenant, path));
    const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)];
    let writing = true;
    let walksDone = 0;
    const afterWalks = async (n: number) => {
      const target = walksDone + n;
      while (walksDone < target && writing) await new Promise((r) => setTimeout(r, 5));
    };
    const stats = { heldCommits: 0, writes: 0 };

    // Writers: every kind of change a partner should see, through REST, the platform's services and SQL.
    const writers = [
      async () => {
        for (let i = 0; i < 40; i++) {
          const change = pick<object>([
            { name: `N ${rand()}` },
            { job_title: `J ${rand()}` },
            { disabled: Math.random() < 0.5 },
            { group_id: pick(groups).id },
          ]);
          expect((await send(tenant, 'patch', `/v1/users/${pick(people)}`, change)).status).toBe(200);
          stats.writes++;
        }
      },
      async () => {
        for (let i = 0; i < 15; i++) {
          expect((await send(tenant, 'patch', `/v1/groups/${pick(groups).id}`, { name: `G ${rand()}` })).status).toBe(200);
          if (i % 5 === 0) people.push(await person(tenant));
          stats.writes++;
        }
      },
      async () => {
        for (let i = 0; i < 12; i++) {
          const c = await openCase(tenant);
          caseIds.push(c.id);
          if (i % 3 === 0) await cases.close(pick(caseIds.slice(0, -1)));
          if (i % 4 === 0) await invite(tenant);
          stats.writes++;
        }
      },
      async () => {
        for (let i = 0; i < 20; i++) {
          const id = pick(conversations);
          const step = i % 5;
          if (step === 0) conversations.push((await startConversation(tenant)).id);
          else if (step === 1) await ingest.recordFact(id, 'Topic', rand());
          else if (step === 2) await ingest.writeSummary(id, rand());
          else if (step === 3) await ingest.end(id);
          else {
            // An ended conversation takes no turn: that refusal is expected, and changes nothing.
            await ingest
              .appendTurn(pick(conversations), { speaker: 'client', language: 'en', text: rand(), translation: rand() })
              .catch((e: { code?: string }) => expect(e.code).toBe('validation_failed'));
          }
          stats.writes++;
        }
      },
      // Transactions that write early and commit late, after the client has walked at least once meanwhile.
      async () => {
        for (let i = 0; i < 6; i++) {
          const qr = await held();
          try {
            await qr.query(`UPDATE people SET name = $2 WHERE id = $1`, [pick(heldOnly.people), `Held ${rand()}`]);
            await qr.query(`UPDATE groups SET name = $2 WHERE id = $1`, [pick(heldOnly.groups).id, `Held ${rand()}`]);
            await qr.query(`UPDATE cases SET title = $2 WHERE id = $1`, [pick(heldOnly.cases), `Held ${rand()}`]);
            await afterWalks(2);
            await qr.commitTransaction();
            stats.heldCommits++;
          } finally {
            if (qr.isTransactionActive) await qr.rollbackTransaction();
            await qr.release();
          }
        }
      },
    ];

    const syncing = (async () => {
      while (writing) {
        for (const m of mirrors) await m.sync(2);
        walksDone++;
      }
    })();
    await Promise.all(writers.map((w) => w()));
    writing = false;
    await syncing;
    // Changes stopped: once the horizon has passed them, one more round brings every copy up to date.
    await settled();
    for (const m of mirrors) await m.sync(2);

    expect(stats.heldCommits).toBe(6);
    expect(walksDone).toBeGreaterThanOrEqual(6);
    for (const m of mirrors) {
      const state = await server(tenant, m.path);
      expect({ list: m.path, empty: state.size === 0 }).toEqual({ list: m.path, empty: false });
      expect({ list: m.path, copy: m.copy }).toEqual({ list: m.path, copy: state });
    }
  }, 120_000);
});
