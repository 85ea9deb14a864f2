import { INestApplicationContext } from '@nestjs/common';
import { Clock } from '@kernel/core';
import { MAINTENANCE_JOBS } from '@kernel/queue';
import { GroupEntity } from '@features/groups';
import { PersonEntity } from '@features/people';
import { ScimMaintenanceJobs } from '@features/scim/worker';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { expectScimError, oktaUser, rand, scim, scimTenant, ScimTenant } from './support/scim-client';
import { until } from './support/until';
import { startScimJobs } from './support/scim-jobs';

const SLOW = 90_000;
const HOUR = 3_600_000;

describe('SCIM refusal warning: when a fifth of a connection’s writes in an hour were refused (and at least 20)', () => {
  const { api, mail } = useApi({ mail: true, beforeClose: () => worker?.close(), hookTimeout: SLOW });
  let worker: INestApplicationContext;
  let db: DataSource;

  beforeAll(async () => {
    worker = await startScimJobs(api.config);
    db = api.app.get(DataSource);
  }, SLOW);
  afterEach(() => jest.restoreAllMocks());

  const run = () => worker.get(ScimMaintenanceJobs).run(MAINTENANCE_JOBS.warnScimRefusals);
  const sentAt = async (connectionIds: string[]): Promise<Map<string, string>> => {
    const rows: Array<{ id: string; sent_at: string }> = await db.query(
      `SELECT connection_id::text AS id, sent_at::text FROM scim_refusal_warnings WHERE connection_id = ANY ($1::bigint[])`,
      [connectionIds],
    );
    return new Map(rows.map((r) => [r.id, r.sent_at]));
  };
  /**
   * Runs the job once; answers which of these tenants' connections it warned about. The job looks
   * at every organisation of the database, which other specs of the run share, so the spec reads
   * only its own connections' claims.
   */
  const warned = async (...tenants: ScimTenant[]): Promise<string[]> => {
    const ids = tenants.map((t) => t.connectionId);
    const before = await sentAt(ids);
    await run();
    const after = await sentAt(ids);
    return ids.filter((id) => after.has(id) && after.get(id) !== before.get(id));
  };
  const at = (time: Date) => jest.spyOn(worker.get(Clock), 'now').mockReturnValue(time);

  /** An organisation with an integrations manager, an owner, a people manager and a disabled integrations manager. */
  const organisation = async () => {
    const t = await scimTenant(api);
    const groups = db.getRepository(GroupEntity);
    const people = db.getRepository(PersonEntity);
    const person = async (permissions: string[], disabled = false) => {
      const group = await groups.save(groups.create({ organisationId: t.organisationId, name: `G ${rand()}`, permissions }));
      return people.save(
        people.create({ organisationId: t.organisationId, email: `p-${rand()}@org.example`, name: 'P', groupId: group.id, joinedAt: new Date(), disabled }),
      );
    };
    return {
      t,
      manager: await person(['integrations.manage']),
      owner: await person(['organisation.own']),
      peopleManager: await person(['people.manage']),
      disabled: await person(['integrations.manage'], true),
    };
  };

  /** Rows as the log writes them, `ago` before `now`. */
  const seed = async (t: ScimTenant, now: Date, outcome: 'succeeded' | 'refused', n: number, ago = 10 * 60_000, operation = 'create') => {
    for (let i = 0; i < n; i++) {
      await db.query(
        `INSERT INTO provisioning_events (organisation_id, connection_id, created_at, identity_provider, operation, resource_type, outcome, status, scim_type, detail)
         VALUES ($1, $2, $3, 'entra', $4, 'User', $5, $6, $7, $8)`,
        [
          t.organisationId,
          t.connectionId,
          new Date(now.getTime() - ago).toISOString(),
          operation,
          outcome,
          outcome === 'refused' ? 400 : 201,
          outcome === 'refused' ? 'invalidValue' : null,
          outcome === 'refused' ? 'manager.value: there is no User 12 in this organisation.' : null,
        ],
      );
    }
  };

  it(
    'mails the organisation’s integration managers and owners once, with the commonest refusals and a link to the log; never another organisation’s',
    async () => {
      const o = await organisation();
      const bystander = await organisation();
      // Real refusals through SCIM: 21 creates of an address that is taken (409 uniqueness), 3 bodies that are not JSON (400).
      const email = `taken.${rand()}@${o.t.domain}`;
      expect((await scim(api, o.t, 'post', '/Users', oktaUser(email))).status).toBe(201);
      for (let i = 0; i < 21; i++) expectScimError(await scim(api, o.t, 'post', '/Users', oktaUser(email)), 409, 'uniqueness');
      for (let i = 0; i < 3; i++) expectScimError(await scim(api, o.t, 'post', '/Users', '{"schemas": ['), 400, 'invalidSyntax');
      await until(async () => {
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM provisioning_events WHERE connection_id = $1 AND outcome = 'refused'`, [
          o.t.connectionId,
        ]);
        return n === 24;
      }, '24 refusals logged');
      // The other organisation had a few refusals too: under the threshold, nothing for its managers.
      await seed(bystander.t, new Date(), 'refused', 5);

      expect(await warned(o.t, bystander.t)).toEqual([o.t.connectionId]);
      for (const to of [o.manager.email, o.owner.email]) {
        const m = await mail.waitFor(to);
        expect(m.subject).toBe('SCIM provisioning failing: Test connection');
        expect(m.text).toContain('24 of the 25 SCIM changes');
        expect(m.text).toMatch(/^- 409 uniqueness: 21 times, for example: userName: .* is already a User of this organisation\.\r?$/m);
        expect(m.text).toMatch(/^- 400 invalidSyntax: 3 times, for example: The body is not valid JSON\.\r?$/m);
        // The commonest first.
        expect(m.text.indexOf('409 uniqueness')).toBeLessThan(m.text.indexOf('400 invalidSyntax'));
        expect(m.text).toContain(`${api.config.publicBaseUrl}/console/scim/log?connection=${o.t.connectionId}&outcome=refused`);
      }
      // Not twice in a day: another run now, and one 23 hours later with fresh refusals, send nothing.
      expect(await warned(o.t, bystander.t)).toEqual([]);
      const later = new Date(Date.now() + 23 * HOUR);
      await seed(o.t, later, 'refused', 25);
      at(later);
      expect(await warned(o.t, bystander.t)).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      expect(mail.to(o.manager.email)).toHaveLength(1);
      expect(mail.to(o.owner.email)).toHaveLength(1);
      for (const p of [o.peopleManager, o.disabled, bystander.manager, bystander.owner]) expect(mail.to(p.email)).toHaveLength(0);

      // A day after the warning, refusals still piling up warn again.
      const nextDay = new Date(Date.now() + 25 * HOUR);
      await seed(o.t, nextDay, 'refused', 25);
      at(nextDay);
      expect(await warned(o.t, bystander.t)).toEqual([o.t.connectionId]);
      await mail.waitForCount(o.manager.email, 2);
    },
    SLOW,
  );

  it(
    'is not sent under the threshold: 19 refused of 19, or 20 refused of 120 (a sixth), nor for refused reads or writes older than an hour',
    async () => {
      const now = new Date(Date.now() + 3 * 24 * HOUR);
      const few = await organisation();
      await seed(few.t, now, 'refused', 19);
      const diluted = await organisation();
      await seed(diluted.t, now, 'refused', 20);
      await seed(diluted.t, now, 'succeeded', 100);
      const reads = await organisation();
      await seed(reads.t, now, 'refused', 30, 60_000, 'read');
      const old = await organisation();
      await seed(old.t, now, 'refused', 30, HOUR + 60_000);
      at(now);
      expect(await warned(few.t, diluted.t, reads.t, old.t)).toEqual([]);
      // One more refusal tips the first over (20 of 20).
      await seed(few.t, now, 'refused', 1);
      expect(await warned(few.t, diluted.t, reads.t, old.t)).toEqual([few.t.connectionId]);
      await mail.waitFor(few.manager.email);
      await new Promise((r) => setTimeout(r, 300));
      for (const o of [diluted, reads, old]) expect(mail.to(o.manager.email)).toHaveLength(0);
    },
    SLOW,
  );
});
