import { PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { oktaUser, patchOp, rand, Res, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';

/**
 * A person is in one group, while Okta and Entra may push a user in several.
 * The group that claimed the person first keeps them; a later claim waits and takes them when the
 * first lets go. So a move works whichever of add and remove comes first, and pushing two
 * overlapping groups again and again moves no one.
 */
describe('SCIM group membership when groups overlap', () => {
  const { api } = useApi();
  let db: DataSource;
  beforeAll(() => {
    db = api.app.get(DataSource);
  });

  const ok = (res: Res, status = 200) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
    return res.body;
  };
  const user = async (t: ScimTenant) => ok(await scim(api, t, 'post', '/Users', oktaUser(`m.${rand()}@${t.domain}`)), 201) as { id: string; userName: string };
  const group = async (t: ScimTenant) =>
    ok(await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: `G ${rand()}`, members: [] }), 201) as { id: string };
  const add = async (t: ScimTenant, g: string, ...users: string[]) =>
    ok(await scim(api, t, 'patch', `/Groups/${g}`, patchOp({ op: 'add', path: 'members', value: users.map((value) => ({ value })) })));
  const remove = async (t: ScimTenant, g: string, u: string) =>
    ok(await scim(api, t, 'patch', `/Groups/${g}`, patchOp({ op: 'remove', path: `members[value eq "${u}"]` })));
  const memberIds = async (t: ScimTenant, g: string) => ((await scim(api, t, 'get', `/Groups/${g}`)).body.members ?? []).map((m: { value: string }) => m.value);
  const groupOf = async (email: string) =>
    (await db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:email)', { email }).getOne())?.groupId ?? null;
  /** Where the person is, seen from the platform, the user and both groups. */
  const where = async (t: ScimTenant, u: { id: string; userName: string }, a: string, b: string) => {
    const platform = await groupOf(u.userName);
    const scimGroups = (await scim(api, t, 'get', `/Users/${u.id}`)).body.groups.map((g: { value: string }) => g.value);
    const inA = (await memberIds(t, a)).includes(u.id);
    const inB = (await memberIds(t, b)).includes(u.id);
    expect(scimGroups).toEqual(platform === null ? [] : [platform]);
    expect({ inA, inB }).toEqual({ inA: platform === a, inB: platform === b });
    return platform === a ? 'A' : platform === b ? 'B' : platform === null ? 'none' : 'other';
  };

  it('a move, add to the new group first then remove from the old (Okta may send it so): the person ends in the new group', async () => {
    const t = await scimTenant(api);
    const u = await user(t);
    const [a, b] = [(await group(t)).id, (await group(t)).id];
    await add(t, a, u.id);
    const answered = await add(t, b, u.id);
    // A claims the person: the add to B waits (200, B's answer truthfully without them).
    expect((answered.members ?? []).map((m: { value: string }) => m.value)).not.toContain(u.id);
    expect(await where(t, u, a, b)).toBe('A');
    await remove(t, a, u.id);
    expect(await where(t, u, a, b)).toBe('B');
  });

  it('a move, remove from the old group first then add to the new: the person ends in the new group', async () => {
    const t = await scimTenant(api);
    const u = await user(t);
    const [a, b] = [(await group(t)).id, (await group(t)).id];
    await add(t, a, u.id);
    await remove(t, a, u.id);
    expect(await where(t, u, a, b)).toBe('none');
    await add(t, b, u.id);
    expect(await where(t, u, a, b)).toBe('B');
  });

  it('a person pushed in two groups stays in the first, whatever the order of later cycles (PATCH add, PUT, Entra batches)', async () => {
    const t = await scimTenant(api);
    const u = await user(t);
    const other = await user(t);
    const [a, b] = [(await group(t)).id, (await group(t)).id];
    await add(t, a, u.id);
    await add(t, b, u.id, other.id);
    for (let cycle = 0; cycle < 3; cycle++) {
      const [first, second] = cycle % 2 === 0 ? [a, b] : [b, a];
      await add(t, first, u.id);
      await add(t, second, u.id);
      ok(
        await scim(api, t, 'put', `/Groups/${second}`, {
          ...(await scim(api, t, 'get', `/Groups/${second}`)).body,
          members: [{ value: u.id }, ...(second === b ? [{ value: other.id }] : [])],
        }),
      );
      expect(await where(t, u, a, b)).toBe('A');
    }
    expect(await memberIds(t, b)).toEqual([other.id]);
    // Entra's batch on B: remove the other member and re-add the person in one PATCH: still A.
    ok(
      await scim(
        api,
        t,
        'patch',
        `/Groups/${b}`,
        patchOp({ op: 'Remove', path: 'members', value: [{ value: other.id }] }, { op: 'Add', path: 'members', value: [{ value: u.id }] }),
      ),
    );
    expect(await where(t, u, a, b)).toBe('A');
    expect(await groupOf(other.userName)).toBeNull();
  });

  it('a waiting claim is withdrawn by a remove or a PUT without the person: leaving the first group then leaves the person in none', async () => {
    const t = await scimTenant(api);
    const u = await user(t);
    const [a, b] = [(await group(t)).id, (await group(t)).id];
    await add(t, a, u.id);
    await add(t, b, u.id);
    await remove(t, b, u.id);
    await remove(t, a, u.id);
    expect(await where(t, u, a, b)).toBe('none');

    await add(t, a, u.id);
    await add(t, b, u.id);
    ok(
      await scim(api, t, 'put', `/Groups/${b}`, {
        schemas: [SCIM.group],
        displayName: (await scim(api, t, 'get', `/Groups/${b}`)).body.displayName,
        members: [],
      }),
    );
    await remove(t, a, u.id);
    expect(await where(t, u, a, b)).toBe('none');
  });

  it("deleting the first group (Okta's unlink and delete) lets the waiting group take the person", async () => {
    const t = await scimTenant(api);
    const u = await user(t);
    const [a, b] = [(await group(t)).id, (await group(t)).id];
    await add(t, a, u.id);
    await add(t, b, u.id);
    expect((await scim(api, t, 'delete', `/Groups/${a}`)).status).toBe(204);
    expect(await groupOf(u.userName)).toBe(b);
    expect(await memberIds(t, b)).toEqual([u.id]);
  });

  it('a person placed in a group by other means (REST) is moved by a SCIM add, as before', async () => {
    const t = await scimTenant(api);
    const u = await user(t);
    const [a, b] = [(await group(t)).id, (await group(t)).id];
    const personId = (await db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:e)', { e: u.userName }).getOne())!.id;
    expect((await api.http().patch(`/v1/users/${personId}`).set(t.auth).send({ group_id: a })).status).toBe(200);
    await add(t, b, u.id);
    expect(await where(t, u, a, b)).toBe('B');
  });
});
