import { AppConfig } from '@kernel/config';
import { REDIS } from '@kernel/redis';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { startApi, TestApi } from './support/api';
import { until } from './support/until';
import { PrivateRedis } from './support/private-servers';
import { rand, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';
import { SCOPES } from '@kernel/core';
import { ApiKeysService, ConnectionsService } from '@features/connections';

const UNLIMITED = { SCIM_RATE_LIMIT_PER_SECOND: '1000000', SCIM_RATE_LIMIT_BURST: '10000000' };
const q = encodeURIComponent;

interface Walked {
  ids: string[];
  totals: number[];
  statuses: number[];
}

/**
 * SCIM index paging walked as Okta's import walks it (startIndex += itemsPerPage until past
 * totalResults), over thousands of users seeded with SQL, on two api instances sharing Postgres and
 * Redis: a forward walk is served from remembered positions (ScimWalks), anything else by offset.
 */
describe('SCIM paging', () => {
  let one: TestApi;
  let two: TestApi;
  let db: DataSource;
  let redis: Redis;
  let a: ScimTenant;
  let b: ScimTenant;
  const SEEDED = 2400;
  let analysedBefore: number;
  const lastAnalysed = async (): Promise<number> => {
    const [row] = await db.query(`SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'people' AND schemaname = current_schema()`);
    return row.last_analyze ? new Date(row.last_analyze).getTime() : 0;
  };

  beforeAll(async () => {
    one = await startApi(UNLIMITED);
    two = await startApi(UNLIMITED);
    db = one.app.get(DataSource);
    redis = one.app.get(REDIS);
    a = await scimTenant(one);
    b = await scimTenant(one);
    // Autovacuum off on people while this file runs, so that only the api can analyse it (below).
    await db.query(`ALTER TABLE people SET (autovacuum_enabled = off)`);
    analysedBefore = await lastAnalysed();
    // Members of both organisations interleaved (so their SCIM ids interleave too), and pending and
    // withdrawn invitations of A: only members and pending invitations are users.
    await db.query(
      `INSERT INTO people (email, name, organisation_id, joined_at)
       SELECT 'p' || i || '@' || CASE WHEN i % 5 = 0 THEN $2 ELSE $4 END, 'Person ' || i, CASE WHEN i % 5 = 0 THEN $1 ELSE $3 END::bigint, now()
         FROM generate_series(1, $5::int) AS i`,
      [b.organisationId, b.domain, a.organisationId, a.domain, SEEDED],
    );
    await db.query(
      `INSERT INTO invitations (organisation_id, email, name, token_hash, source, status, expires_at)
       SELECT $1, 'inv' || i || '@elsewhere-' || $2 || '.example', 'Invited ' || i, md5($2 || i) || md5(i || $2), 'api',
              CASE WHEN i % 4 = 0 THEN 'withdrawn' ELSE 'pending' END, now() + interval '7 days'
         FROM generate_series(1, 400) AS i`,
      [a.organisationId, rand()],
    );
  });
  afterAll(async () => {
    await db.query(`ALTER TABLE people RESET (autovacuum_enabled)`);
    await one.close();
    await two.close();
  });

  /** The organisation's users by SQL, not by the code under test: members and pending invitations, by SCIM id. */
  async function usersOf(t: ScimTenant): Promise<string[]> {
    const rows: Array<{ id: string }> = await db.query(
      `SELECT s.id::text AS id FROM scim_users s
        WHERE s.organisation_id = $1
          AND (EXISTS (SELECT 1 FROM people p WHERE p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key)
               OR EXISTS (SELECT 1 FROM invitations i WHERE i.organisation_id = s.organisation_id AND lower(i.email) = s.email_key AND i.status = 'pending'))
        ORDER BY s.id`,
      [t.organisationId],
    );
    return rows.map((r) => r.id);
  }

  /** One page as a connector asks for it, from the api whose turn it is. */
  async function page(t: ScimTenant, resource: string, startIndex: number, count: number, api: TestApi = one, filter?: string) {
    const res = await scim(api, t, 'get', `/${resource}?startIndex=${startIndex}&count=${count}${filter ? `&filter=${q(filter)}` : ''}`);
    expect({ status: res.status, schemas: res.body.schemas, detail: res.body.detail }).toEqual({ status: 200, schemas: [SCIM.list], detail: undefined });
    expect(res.body.startIndex).toBe(startIndex);
    expect(res.body.itemsPerPage).toBe(res.body.Resources.length);
    return { total: res.body.totalResults as number, ids: (res.body.Resources as Array<{ id: string }>).map((r) => r.id) };
  }

  /** A walk as a step function: each call fetches the next page (alternating api instances); false once the walk is over. */
  function walker(t: ScimTenant, count: number, resource = 'Users', filter?: string) {
    const walked: Walked = { ids: [], totals: [], statuses: [] };
    let startIndex = 1;
    let turn = 0;
    let done = false;
    const step = async (): Promise<boolean> => {
      if (done) return false;
      const p = await page(t, resource, startIndex, count, turn++ % 2 ? two : one, filter);
      walked.ids.push(...p.ids);
      walked.totals.push(p.total);
      startIndex += p.ids.length;
      done = p.ids.length === 0 || startIndex > p.total;
      return !done;
    };
    return { walked, step };
  }

  async function walk(t: ScimTenant, count: number, resource = 'Users', filter?: string): Promise<Walked> {
    const w = walker(t, count, resource, filter);
    while (await w.step());
    return w.walked;
  }

  /** Another connection (and key) of the organisation of `t`. */
  async function connectionOf(t: ScimTenant): Promise<ScimTenant> {
    const connection = await one.app.get(ConnectionsService).create(t.organisationId, `Connection ${rand()}`, [...SCOPES]);
    const key = await one.app.get(ApiKeysService).create(connection.id);
    return { ...t, connectionId: connection.id, keyId: key.id, key: key.key, auth: { Authorization: `Bearer ${key.key}` } };
  }

  const ascending = (ids: string[]) => ids.every((id, k) => k === 0 || BigInt(ids[k - 1]) < BigInt(id));

  it('a list right after a bulk load analyses the tables it reads, without waiting for autovacuum', async () => {
    // Postgres counts the seeded rows within seconds, and the api looks at most every ten seconds.
    await until(
      async () => {
        await page(a, 'Users', 1, 10);
        return (await lastAnalysed()) > analysedBefore;
      },
      'people analysed by the api',
      28_000,
    );
    const [row] = await db.query(`SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relname = 'people' AND schemaname = current_schema()`);
    expect(Number(row.n)).toBeLessThan(SEEDED);
  }, 40_000);

  it('a forward walk over two api instances answers every user exactly once, in id order, with the right totalResults on every page', async () => {
    const expected = await usersOf(a);
    expect(expected.length).toBe(SEEDED - SEEDED / 5 + 300);
    const walked = await walk(a, 37);
    expect(walked.ids).toEqual(expected);
    expect(ascending(walked.ids)).toBe(true);
    expect(new Set(walked.totals)).toEqual(new Set([expected.length]));
    // The walk was served from remembered positions: the last row of each page is remembered
    // under the position it ended at, in Redis (where every replica reads it).
    const prefix = one.app.get(AppConfig).redisPrefix;
    const keys = await redis.keys(`${prefix}:scim:walk:{${a.organisationId}:${a.connectionId}:Users:*}:at:*`);
    const at = new Map(await Promise.all(keys.map(async (k) => [Number(k.split(':at:')[1]), await redis.get(k)] as const)));
    expect(at.get(37)).toBe(expected[36]);
    expect(at.get(37 * 20)).toBe(expected[37 * 20 - 1]);
  });

  it('pages asked in any order (served by offset) answer every user exactly once, and a walk may continue forward from a jump', async () => {
    const expected = await usersOf(a);
    const starts = Array.from({ length: Math.ceil(expected.length / 50) }, (_, k) => 1 + 50 * k).sort(() => Math.random() - 0.5);
    const pages = new Map<number, string[]>();
    for (const [k, s] of starts.entries()) {
      const p = await page(a, 'Users', s, 50, k % 2 ? two : one);
      expect(p.total).toBe(expected.length);
      pages.set(s, p.ids);
    }
    expect([...pages.entries()].sort(([x], [y]) => x - y).flatMap(([, ids]) => ids)).toEqual(expected);

    // Jump to 1001, then walk on from there with another page size.
    let s = 1001;
    const after: string[] = [];
    for (let k = 0; s <= expected.length; k++) {
      const p = await page(a, 'Users', s, 73, k % 2 ? one : two);
      after.push(...p.ids);
      s += p.ids.length;
    }
    expect(after).toEqual(expected.slice(1000));
    // Past the end: an empty page with the right totalResults.
    expect(await page(a, 'Users', expected.length + 1, 100)).toEqual({ total: expected.length, ids: [] });
    expect(await page(a, 'Users', expected.length + 1000, 100, two)).toEqual({ total: expected.length, ids: [] });
  });

  it('interleaved walks (two by one connection with different page sizes, one by another connection, one of another organisation, one filtered) never mix positions', async () => {
    const other = await connectionOf(a);
    await db.query(`UPDATE people SET name = 'Same Name' WHERE organisation_id = $1 AND id % 7 = 0`, [a.organisationId]);
    const sameName: Array<{ id: string }> = await db.query(
      `SELECT s.id::text AS id FROM scim_users s JOIN people p ON p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key
        WHERE s.organisation_id = $1 AND p.name = 'Same Name' ORDER BY s.id`,
      [a.organisationId],
    );
    expect(sameName.length).toBeGreaterThan(100);
    const walks = [walker(a, 30), walker(a, 45), walker(other, 30), walker(b, 30), walker(a, 30, 'Users', 'displayName eq "Same Name"')];
    for (let more = true; more;) more = (await Promise.all(walks.map((w) => w.step()))).some(Boolean);
    const expected = await usersOf(a);
    expect(walks[0].walked.ids).toEqual(expected);
    expect(walks[1].walked.ids).toEqual(expected);
    expect(walks[2].walked.ids).toEqual(expected);
    expect(walks[3].walked.ids).toEqual(await usersOf(b));
    expect(walks[3].walked.ids.filter((id) => expected.includes(id))).toEqual([]);
    expect(walks[4].walked.ids).toEqual(sameName.map((r) => r.id));
    expect(new Set(walks[4].walked.totals)).toEqual(new Set([sameName.length]));
  });

  it('a walk while users are removed and added: no error, every user present throughout exactly once, the added ones after them; a second walk numbered afresh is not misled by the first', async () => {
    const before = await usersOf(a);
    const members: Array<{ id: string }> = await db.query(
      `SELECT s.id::text AS id FROM scim_users s JOIN people p ON p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key
        WHERE s.organisation_id = $1 ORDER BY s.id`,
      [a.organisationId],
    );
    // A connection of its own: the walks of the tests above, by A's first connection, remembered
    // positions numbered before the change, and where two walks disagree an offset answers.
    const mover = await connectionOf(a);
    const w1 = walker(mover, 100);
    for (let k = 0; k < 5; k++) await w1.step();
    expect(w1.walked.ids).toEqual(before.slice(0, 500));
    // Remove three users the walk has passed and three it has not reached; add three members.
    const passed = [members[10].id, members[200].id, before[499]];
    const ahead = [members[600].id, members[1200].id, members[members.length - 1].id];
    expect(BigInt(ahead[0])).toBeGreaterThan(BigInt(before[499]));
    await db.query(
      `DELETE FROM people p USING scim_users s
        WHERE s.id = ANY($1::bigint[]) AND p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key`,
      [[...passed, ...ahead]],
    );
    await db.query(
      `INSERT INTO people (email, name, organisation_id, joined_at) SELECT 'late' || i || '@' || $2, 'Late ' || i, $1, now() FROM generate_series(1, 3) AS i`,
      [a.organisationId, a.domain],
    );
    const now = await usersOf(a);
    expect(now.length).toBe(before.length - 3);

    // A second walk by the same connection, with the same page size, numbered after the change.
    const w2 = walker(mover, 100);
    for (let more = true; more;) more = (await Promise.all([w1.step(), w2.step()])).some(Boolean);

    // The first walk continues after its last row: nothing it had not reached is skipped, nothing repeated.
    const throughout = before.filter((id) => ![...passed, ...ahead].includes(id));
    const added = now.filter((id) => !before.includes(id));
    expect(added).toHaveLength(3);
    expect(new Set(w1.walked.ids).size).toBe(w1.walked.ids.length);
    expect(w1.walked.ids).toEqual([...before.slice(0, 500), ...now.filter((id) => BigInt(id) > BigInt(before[499]))]);
    for (const id of throughout) expect(w1.walked.ids).toContain(id);
    for (const id of ahead) expect(w1.walked.ids).not.toContain(id);
    // The second walk, over unchanged data, is exact: where its positions disagreed with the first
    // walk's, neither was used (an offset answered).
    expect(w2.walked.ids).toEqual(now);
    expect(new Set(w2.walked.totals)).toEqual(new Set([now.length]));
    // A new walk's first page counts afresh.
    expect((await page(a, 'Users', 1, 10, two)).total).toBe(now.length);
  });

  it('two walks of one connection that disagree about a position (rows removed between them) make it count again: the later walk stays exact', async () => {
    const x = await connectionOf(a);
    const before = await usersOf(a);
    const members: Array<{ id: string }> = await db.query(
      `SELECT s.id::text AS id FROM scim_users s JOIN people p ON p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key
        WHERE s.organisation_id = $1 ORDER BY s.id`,
      [a.organisationId],
    );
    const wA = walker(x, 100);
    for (let k = 0; k < 4; k++) await wA.step();
    // Three users before position 400 removed, two members added.
    await db.query(
      `DELETE FROM people p USING scim_users s
        WHERE s.id = ANY($1::bigint[]) AND p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key`,
      [[members[5].id, members[50].id, members[300].id]],
    );
    await db.query(
      `INSERT INTO people (email, name, organisation_id, joined_at) SELECT 'again' || i || '@' || $2, 'Again ' || i, $1, now() FROM generate_series(1, 2) AS i`,
      [a.organisationId, a.domain],
    );
    const now = await usersOf(a);
    // A second walk, 250 at a time, numbered after the change, reaches position 500 first…
    const wB = walker(x, 250);
    await wB.step();
    await wB.step();
    // …then the first walk, continuing after its own position 400, ends a page at 500 on another user.
    await wA.step();
    for (let more = true; more;) more = await wB.step();
    for (let more = true; more;) more = await wA.step();
    expect(wB.walked.ids).toEqual(now);
    expect(new Set(wA.walked.ids).size).toBe(wA.walked.ids.length);
    for (const id of wA.walked.ids) expect(before.includes(id) || now.includes(id)).toBe(true);
  });

  it('a walk past which more users were removed than a page holds still reaches its end (totalResults stays ahead of its position)', async () => {
    const x = await connectionOf(a);
    const before = await usersOf(a);
    const w = walker(x, 50);
    await w.step();
    await w.step();
    const passed: Array<{ id: string }> = await db.query(
      `SELECT s.id::text AS id FROM scim_users s JOIN people p ON p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key
        WHERE s.organisation_id = $1 AND s.id <= $2::bigint ORDER BY s.id LIMIT 60`,
      [a.organisationId, before[99]],
    );
    expect(passed).toHaveLength(60);
    await db.query(
      `DELETE FROM people p USING scim_users s
        WHERE s.id = ANY($1::bigint[]) AND p.organisation_id = s.organisation_id AND lower(p.email) = s.email_key`,
      [passed.map((r) => r.id)],
    );
    const now = await usersOf(a);
    // A first page asked meanwhile counts afresh: the walk's pages then carry the current count.
    expect((await page(x, 'Users', 1, 10)).total).toBe(now.length);
    for (let more = true; more;) more = await w.step();
    expect(w.walked.ids).toEqual([...before.slice(0, 100), ...now.filter((id) => BigInt(id) > BigInt(before[99]))]);
    // A new walk numbers afresh: exact, with the current count.
    const fresh = await walk(x, 50);
    expect(fresh.ids).toEqual(now);
    expect(new Set(fresh.totals)).toEqual(new Set([now.length]));
  });

  it('groups page the same way, and a walk stays within its organisation', async () => {
    await db.query(
      `INSERT INTO groups (organisation_id, name)
       SELECT CASE WHEN i % 3 = 0 THEN $2 ELSE $1 END::bigint, 'Group ' || i FROM generate_series(1, 330) AS i`,
      [a.organisationId, b.organisationId],
    );
    const groupsOf = async (t: ScimTenant) =>
      ((await db.query(`SELECT g.id::text AS id FROM groups g WHERE g.organisation_id = $1 ORDER BY g.id`, [t.organisationId])) as Array<{ id: string }>).map(
        (r) => r.id,
      );
    const [ga, gb] = await Promise.all([groupsOf(a), groupsOf(b)]);
    expect(ga.length).toBeGreaterThanOrEqual(220);
    const walks = [walker(a, 17, 'Groups'), walker(b, 17, 'Groups')];
    for (let more = true; more;) more = (await Promise.all(walks.map((w) => w.step()))).some(Boolean);
    expect(walks[0].walked.ids).toEqual(ga);
    expect(walks[1].walked.ids).toEqual(gb);
    expect(new Set(walks[0].walked.totals)).toEqual(new Set([ga.length]));
  });
});

describe('SCIM paging while Redis is unreachable', () => {
  const SLOW = 60_000;
  let redis: PrivateRedis;
  let api: TestApi;
  let t: ScimTenant;
  let expected: string[];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    api = await startApi({ ...UNLIMITED, REDIS_URL: redis.url });
    t = await scimTenant(api);
    const db = api.app.get(DataSource);
    await db.query(
      `INSERT INTO people (email, name, organisation_id, joined_at) SELECT 'r' || i || '@' || $2, 'R ' || i, $1, now() FROM generate_series(1, 300) AS i`,
      [t.organisationId, t.domain],
    );
    const rows: Array<{ id: string }> = await db.query(`SELECT s.id::text AS id FROM scim_users s WHERE s.organisation_id = $1 ORDER BY s.id`, [
      t.organisationId,
    ]);
    expected = rows.map((r) => r.id);
  }, SLOW);
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  }, SLOW);

  async function walkAll(): Promise<string[]> {
    const ids: string[] = [];
    for (let s = 1; ;) {
      const res = await scim(api, t, 'get', `/Users?startIndex=${s}&count=40`);
      expect({ status: res.status, total: res.body.totalResults }).toEqual({ status: 200, total: expected.length });
      ids.push(...res.body.Resources.map((r: { id: string }) => r.id));
      s += res.body.Resources.length;
      if (res.body.Resources.length === 0 || s > res.body.totalResults) return ids;
    }
  }

  it(
    'pages are found by offset while it is away (exact, no error), and walks are remembered again once it is back',
    async () => {
      expect(await walkAll()).toEqual(expected);
      await redis.stop();
      expect(await walkAll()).toEqual(expected);
      expect(await walkAll()).toEqual(expected);
      // Back, empty (its scripts forgotten too): within the outage probe's interval walks are remembered again.
      await redis.resume();
      const client = api.app.get<Redis>(REDIS);
      const key = `${api.config.redisPrefix}:scim:walk:{${t.organisationId}:${t.connectionId}:Users:*}:at:40`;
      await until(async () => {
        expect(await walkAll()).toEqual(expected);
        return (await client.keys(key)).length > 0;
      }, 'a walk remembered again');
    },
    SLOW,
  );
});
