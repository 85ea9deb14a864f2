import { PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { expectScimError, oktaUser, patchOp, rand, Res, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';

/**
 * A key with users:write (REST or SCIM) may disable, remove or regroup the organisation's
 * managers, but no change may leave an organisation that had an active owner (a person whose
 * group holds organisation.own) with none: 409 last_people_manager (SCIM: its error schema, 409),
 * nothing changed, though people able to manage people remain. Owners can always use the
 * Integrations section, so no key can lock the organisation out of it.
 */
describe('the last owner', () => {
  const { api } = useApi({ mail: true });
  let db: DataSource;
  beforeAll(() => {
    db = api.app.get(DataSource);
  });

  interface Stand {
    t: ScimTenant;
    ownersGroup: string;
    staffGroup: string;
    /** The only owner: SCIM user id, person id. */
    owner: { scimId: string; personId: string };
    /** A people manager who is not an owner, so the older rule (some manager must remain) is not what refuses. */
    manager: { scimId: string; personId: string };
  }

  const rest = (t: ScimTenant, method: 'patch' | 'delete' | 'put', path: string, body?: object): Promise<Res> => {
    const req = api.http()[method](path).set(t.auth);
    return (body === undefined ? req : req.send(body)) as unknown as Promise<Res>;
  };
  const scimUser = async (t: ScimTenant) => {
    const res = await scim(api, t, 'post', '/Users', oktaUser(`m.${rand()}@${t.domain}`));
    expect(res.status).toBe(201);
    const person = await db
      .getRepository(PersonEntity)
      .createQueryBuilder('p')
      .where('lower(p.email) = lower(:email)', { email: res.body.userName })
      .getOneOrFail();
    return { scimId: String(res.body.id), personId: String(person.id) };
  };
  /** A group with permissions the API may not grant is the platform's to make: written straight to the table. */
  const seedGroup = async (organisationId: string, permissions: string[]) =>
    String(
      (
        await db.query(`INSERT INTO groups (organisation_id, name, permissions) VALUES ($1, $2, $3) RETURNING id`, [organisationId, `G ${rand()}`, permissions])
      )[0].id,
    );
  const place = (personId: string, groupId: string) => db.query(`UPDATE people SET group_id = $2 WHERE id = $1`, [personId, groupId]);

  const stand = async (): Promise<Stand> => {
    const t = await scimTenant(api);
    const ownersGroup = await seedGroup(t.organisationId, ['organisation.own']);
    const managersGroup = await seedGroup(t.organisationId, ['people.manage']);
    const staffGroup = await seedGroup(t.organisationId, []);
    const owner = await scimUser(t);
    const manager = await scimUser(t);
    await place(owner.personId, ownersGroup);
    await place(manager.personId, managersGroup);
    return { t, ownersGroup, staffGroup, owner, manager };
  };

  /** The owner is still an active member of the owners' group. */
  const ownerUnchanged = async (s: Stand) => {
    expect(await db.getRepository(PersonEntity).findOneByOrFail({ id: s.owner.personId })).toMatchObject({
      organisationId: s.t.organisationId,
      groupId: s.ownersGroup,
      disabled: false,
    });
    expect((await db.query(`SELECT 1 FROM groups WHERE id = $1`, [s.ownersGroup])).length).toBe(1);
  };
  const expectRest409 = (res: Res) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 409,
      body: { error: { code: 'last_people_manager', message: expect.stringContaining('no active owner') } },
    });
  };
  const expectScim409 = (res: Res) => {
    expectScimError(res, 409);
    expect(res.body.detail).toContain('no active owner');
  };

  it('REST: disabling, moving out of their group or removing the last owner answers 409 and changes nothing', async () => {
    const s = await stand();
    const path = `/v1/users/${s.owner.personId}`;
    expectRest409(await rest(s.t, 'patch', path, { disabled: true }));
    expectRest409(await rest(s.t, 'patch', path, { group_id: s.staffGroup, name: 'Moved' }));
    expectRest409(await rest(s.t, 'patch', path, { group_id: null }));
    expectRest409(await rest(s.t, 'delete', path));
    await ownerUnchanged(s);
    expect((await db.getRepository(PersonEntity).findOneByOrFail({ id: s.owner.personId })).name).not.toBe('Moved');
    // Managers who are not owners are the key's to change.
    expect((await rest(s.t, 'patch', `/v1/users/${s.manager.personId}`, { disabled: true })).status).toBe(200);
  });

  it('REST: deleting the group of the last owner answers 409 and changes nothing', async () => {
    const s = await stand();
    expectRest409(await rest(s.t, 'delete', `/v1/groups/${s.ownersGroup}`));
    await ownerUnchanged(s);
  });

  it('SCIM: PATCH active false, PUT active false and DELETE of the last owner answer 409 in the SCIM error schema and change nothing', async () => {
    const s = await stand();
    const path = `/Users/${s.owner.scimId}`;
    expectScim409(await scim(api, s.t, 'patch', path, patchOp({ op: 'replace', path: 'active', value: false })));
    expectScim409(await scim(api, s.t, 'patch', path, patchOp({ op: 'replace', value: { active: false } })));
    const current = (await scim(api, s.t, 'get', path)).body;
    expectScim409(await scim(api, s.t, 'put', path, { schemas: [SCIM.user], userName: current.userName, active: false }));
    expectScim409(await scim(api, s.t, 'delete', path));
    await ownerUnchanged(s);
    expect((await scim(api, s.t, 'get', path)).body.active).toBe(true);
  });

  it('SCIM Groups: taking the last owner out of their group (PATCH remove, PATCH replace, PUT) or deleting it answers 409 and changes nothing', async () => {
    const s = await stand();
    const path = `/Groups/${s.ownersGroup}`;
    const group = (await scim(api, s.t, 'get', path)).body;
    expect(group.members.map((m: { value: string }) => m.value)).toEqual([s.owner.scimId]);
    expectScim409(await scim(api, s.t, 'patch', path, patchOp({ op: 'remove', path: `members[value eq "${s.owner.scimId}"]` })));
    expectScim409(await scim(api, s.t, 'patch', path, patchOp({ op: 'replace', path: 'members', value: [] })));
    expectScim409(await scim(api, s.t, 'put', path, { schemas: [SCIM.group], displayName: group.displayName, members: [] }));
    expectScim409(await scim(api, s.t, 'delete', path));
    await ownerUnchanged(s);
  });

  it('with a second owner each change is allowed', async () => {
    const s = await stand();
    const second = await scimUser(s.t);
    await place(second.personId, s.ownersGroup);
    expect((await rest(s.t, 'patch', `/v1/users/${s.owner.personId}`, { disabled: true })).status).toBe(200);
    // Now the second is the last owner.
    expectScim409(await scim(api, s.t, 'delete', `/Users/${second.scimId}`));
  });

  it('under two concurrent disables of the only two owners (REST and SCIM), one succeeds and one answers 409', async () => {
    const s = await stand();
    const second = await scimUser(s.t);
    await place(second.personId, s.ownersGroup);
    const [viaRest, viaScim] = await Promise.all([
      rest(s.t, 'patch', `/v1/users/${s.owner.personId}`, { disabled: true }),
      scim(api, s.t, 'patch', `/Users/${second.scimId}`, patchOp({ op: 'replace', path: 'active', value: false })),
    ]);
    expect([viaRest.status, viaScim.status].sort()).toEqual([200, 409]);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM people WHERE group_id = $1 AND NOT disabled`, [s.ownersGroup]);
    expect(n).toBe(1);
  });
});
