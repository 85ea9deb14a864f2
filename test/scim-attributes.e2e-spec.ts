import { PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { entraUser, expectScimError, oktaUser, patchOp, rand, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';

/** Okta's profile push with every attribute of its default SCIM 2.0 mappings. */
const oktaFullUser = (email: string) => ({
  ...oktaUser(email),
  name: { givenName: 'Test', familyName: 'User', middleName: 'Quinn', honorificPrefix: 'Dr.', honorificSuffix: 'PhD' },
  nickName: 'Tess',
  profileUrl: 'https://profiles.example/tess',
  userType: 'Employee',
  title: 'Interpreter',
  preferredLanguage: 'nl-NL',
  locale: 'nl-NL',
  timezone: 'Europe/Amsterdam',
  phoneNumbers: [
    { value: '+31 20 000 0001', type: 'work', primary: true },
    { value: '+31 6 0000 0002', type: 'mobile' },
  ],
  addresses: [
    {
      type: 'work',
      streetAddress: '1 Main St',
      locality: 'Town',
      region: 'NH',
      postalCode: '1000 AA',
      country: 'NL',
      formatted: '1 Main St, Town',
      primary: true,
    },
  ],
  schemas: [SCIM.user, SCIM.enterprise],
  [SCIM.enterprise]: { employeeNumber: '42', costCenter: 'CC-1', organization: 'Acme', division: 'Care', department: 'Interpreting' },
});

/** What a client reads back and compares with what it wrote: everything but meta. */
const written = (user: Record<string, unknown>) => {
  const { meta, ...rest } = user;
  return rest;
};

describe('SCIM attributes answered as written', () => {
  const { api } = useApi();
  let db: DataSource;
  beforeAll(() => {
    db = api.app.get(DataSource);
  });

  const person = (email: string) => db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:email)', { email }).getOne();
  const create = async (t: ScimTenant, body: object) => {
    const res = await scim(api, t, 'post', '/Users', body);
    expect(res.status).toBe(201);
    return res.body;
  };
  /** A PATCH answers 200, and a GET afterwards answers the same user. */
  const patched = async (t: ScimTenant, id: string, ...ops: unknown[]) => {
    const res = await scim(api, t, 'patch', `/Users/${id}`, patchOp(...ops));
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    expect(written((await scim(api, t, 'get', `/Users/${id}`)).body)).toEqual(written(res.body));
    return res.body;
  };

  describe('Entra clears a string with ""', () => {
    it('"" on emails[type eq "work"].value clears the work address as null does, and again next cycle', async () => {
      const t = await scimTenant(api);
      const email = `ana.${rand()}@${t.domain}`;
      const { id } = await create(t, entraUser(email));
      const once = await patched(t, id, { op: 'Replace', path: 'emails[type eq "work"].value', value: '' });
      expect(once.emails).toBeUndefined();
      expect(once.userName).toBe(email);
      // Filters see what is answered: no work email any more, the userName still.
      const count = async (filter: string) => (await scim(api, t, 'get', `/Users?filter=${encodeURIComponent(filter)}`)).body.totalResults;
      expect(await count(`emails[type eq "work"].value eq "${email}"`)).toBe(0);
      expect(await count(`emails.value eq "${email}"`)).toBe(0);
      expect(await count(`userName eq "${email}"`)).toBe(1);
      // Entra sends the same null update every cycle: still 200, nothing changes.
      expect(written(await patched(t, id, { op: 'Replace', path: 'emails[type eq "work"].value', value: '' }))).toEqual(written(once));
      await patched(t, id, { op: 'Add', path: 'emails[type eq "work"].value', value: email });
      expect((await patched(t, id, { op: 'Replace', path: 'emails[type eq "work"].value', value: null })).emails).toBeUndefined();
      // Whole values too: an email whose value is "" (or null) is no address, not a bad one.
      const home = `home.${rand()}@x.example`;
      const replaced = await patched(t, id, {
        op: 'Replace',
        path: 'emails',
        value: [
          { type: 'work', value: '' },
          { type: 'home', value: home },
        ],
      });
      expect(replaced.emails).toEqual([{ type: 'home', value: home }]);
      const put = await scim(api, t, 'put', `/Users/${id}`, { ...entraUser(email), emails: [{ type: 'work', value: '', primary: true }] });
      expect(put.status).toBe(200);
      expect(put.body.emails).toBeUndefined();
    });

    it('"" clears every other string Entra maps (title, names, displayName, enterprise fields, manager, kept attributes), as null does', async () => {
      const t = await scimTenant(api);
      const boss = await create(t, entraUser(`boss.${rand()}@${t.domain}`));
      const { id } = await create(t, {
        ...entraUser(`ana.${rand()}@${t.domain}`),
        [SCIM.enterprise]: { employeeNumber: '1', department: 'Care', manager: { value: boss.id } },
      });
      const res = await patched(
        t,
        id,
        { op: 'Replace', path: 'title', value: '' },
        { op: 'Replace', path: 'displayName', value: '' },
        { op: 'Replace', path: 'name.givenName', value: '' },
        { op: 'Replace', path: 'name.familyName', value: '' },
        { op: 'Replace', path: 'name.formatted', value: '' },
        { op: 'Replace', path: 'preferredLanguage', value: '' },
        { op: 'Replace', path: 'addresses[type eq "work"].formatted', value: '' },
        { op: 'Replace', path: 'phoneNumbers[type eq "work"].value', value: '' },
        { op: 'Replace', path: `${SCIM.enterprise}:department`, value: '' },
        { op: 'Replace', path: `${SCIM.enterprise}:employeeNumber`, value: '' },
        { op: 'Replace', path: `${SCIM.enterprise}:manager`, value: '' },
      );
      for (const gone of ['title', 'displayName', 'name', 'preferredLanguage', 'phoneNumbers', SCIM.enterprise])
        expect({ gone, value: res[gone] }).toEqual({ gone, value: undefined });
      expect(res.addresses).toEqual([
        { type: 'work', primary: true, streetAddress: '1 Main St', locality: 'Town', region: 'R', postalCode: '1', country: 'NL' },
      ]);
    });

    it('"" is not a value for a boolean or a member list: refused, nothing changed', async () => {
      const t = await scimTenant(api);
      const { id } = await create(t, entraUser(`ana.${rand()}@${t.domain}`));
      expectScimError(
        await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'Replace', path: 'title', value: 'X' }, { op: 'Replace', path: 'active', value: '' })),
        422,
        'invalidValue',
      );
      expect((await scim(api, t, 'get', `/Users/${id}`)).body.title).toBe('Nurse');
    });
  });

  describe('remove removes', () => {
    it('remove (or null) on displayName, name.givenName and name.familyName: gone from the answer and from a GET', async () => {
      const t = await scimTenant(api);
      const email = `u-${rand()}@${t.domain}`;
      const { id } = await create(t, oktaUser(email));
      const noDisplay = await patched(t, id, { op: 'remove', path: 'displayName' });
      expect(noDisplay.displayName).toBeUndefined();
      expect(noDisplay.name).toEqual({ givenName: 'Test', familyName: 'User' });
      // The platform still shows a name: the one the remaining name parts make.
      expect(await person(email)).toMatchObject({ name: 'Test User' });
      // A filter on displayName sees what is answered, not the platform's name.
      const byName = await scim(api, t, 'get', `/Users?filter=${encodeURIComponent('displayName eq "Test User"')}`);
      expect(byName.body.totalResults).toBe(0);
      const noGiven = await patched(t, id, { op: 'replace', path: 'name.givenName', value: null });
      expect(noGiven.name).toEqual({ familyName: 'User' });
      expect(noGiven.displayName).toBeUndefined();
      const noName = await patched(t, id, { op: 'remove', path: 'name.familyName' });
      expect(noName.name).toBeUndefined();
      expect(noName.displayName).toBeUndefined();
      // Every name removed: SCIM has none; the platform keeps the last it had.
      expect(await person(email)).toMatchObject({ name: 'User' });
      const back = await patched(t, id, { op: 'add', value: { displayName: 'Tess Back', 'name.givenName': 'Tess' } });
      expect(back).toMatchObject({ displayName: 'Tess Back', name: { givenName: 'Tess' } });
      expect(await person(email)).toMatchObject({ name: 'Tess Back' });
    });

    it('a rename on the platform (REST) shows as the displayName until SCIM writes again', async () => {
      const t = await scimTenant(api);
      const email = `u-${rand()}@${t.domain}`;
      const { id } = await create(t, oktaUser(email));
      await patched(t, id, { op: 'remove', path: 'displayName' });
      const p = await person(email);
      expect((await api.http().patch(`/v1/users/${p!.id}`).set(t.auth).send({ name: 'Renamed Here' })).status).toBe(200);
      expect((await scim(api, t, 'get', `/Users/${id}`)).body.displayName).toBe('Renamed Here');
    });
  });

  describe('attributes kept beside the person', () => {
    it('Okta: every attribute of its profile push is answered as sent, by POST, GET and PUT', async () => {
      const t = await scimTenant(api);
      const body = oktaFullUser(`full.${rand()}@${t.domain}`);
      const created = await create(t, body);
      const { password, groups, ...sent } = body;
      expect(written(created)).toEqual({ ...sent, id: created.id, groups: [] });
      expect(written((await scim(api, t, 'get', `/Users/${created.id}`)).body)).toEqual(written(created));

      const changed = {
        ...body,
        nickName: 'T.',
        name: { givenName: 'Test', familyName: 'User', middleName: 'Q.' },
        phoneNumbers: [{ value: '+31 6 0000 0003', type: 'mobile' }],
        addresses: undefined,
      };
      const put = await scim(api, t, 'put', `/Users/${created.id}`, changed);
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        nickName: 'T.',
        name: { givenName: 'Test', familyName: 'User', middleName: 'Q.' },
        phoneNumbers: [{ value: '+31 6 0000 0003', type: 'mobile' }],
      });
      expect(put.body.name.honorificPrefix).toBeUndefined();
      expect(put.body.addresses).toBeUndefined();
      expect(written((await scim(api, t, 'get', `/Users/${created.id}`)).body)).toEqual(written(put.body));
    });

    it('Entra: addresses, phone numbers, preferredLanguage and the enterprise fields, updated through filtered paths', async () => {
      const t = await scimTenant(api);
      const created = await create(t, entraUser(`ana.${rand()}@${t.domain}`));
      expect(created).toMatchObject({
        preferredLanguage: 'en-US',
        phoneNumbers: [{ primary: true, type: 'work', value: '+31 20 000 0000' }],
        addresses: [
          { primary: true, type: 'work', streetAddress: '1 Main St', locality: 'Town', region: 'R', postalCode: '1', country: 'NL', formatted: '1 Main St' },
        ],
      });
      const res = await patched(
        t,
        created.id,
        { op: 'Add', path: 'name.middleName', value: 'María' },
        { op: 'Replace', path: 'addresses[type eq "work"].streetAddress', value: '2 Side St' },
        { op: 'Add', path: 'phoneNumbers[type eq "mobile"].value', value: '+31 6 1' },
        { op: 'Replace', path: 'nickName', value: 'Ani' },
        { op: 'Add', path: `${SCIM.enterprise}:costCenter`, value: 'CC-9' },
      );
      expect(res).toMatchObject({
        nickName: 'Ani',
        name: { givenName: 'Ana', familyName: 'López', formatted: 'Ana López', middleName: 'María' },
        phoneNumbers: [
          { primary: true, type: 'work', value: '+31 20 000 0000' },
          { type: 'mobile', value: '+31 6 1' },
        ],
        addresses: [expect.objectContaining({ type: 'work', streetAddress: '2 Side St', locality: 'Town' })],
        [SCIM.enterprise]: { employeeNumber: '1001', department: 'Care', costCenter: 'CC-9' },
      });
      const removed = await patched(
        t,
        created.id,
        { op: 'Remove', path: 'phoneNumbers[type eq "mobile"]' },
        { op: 'Remove', path: 'name.middleName' },
        { op: 'Remove', path: 'addresses' },
      );
      expect(removed.phoneNumbers).toEqual([{ primary: true, type: 'work', value: '+31 20 000 0000' }]);
      expect(removed.name.middleName).toBeUndefined();
      expect(removed.addresses).toBeUndefined();
    });

    it('the schema discovery lists the kept attributes; the password is never kept nor answered', async () => {
      const t = await scimTenant(api);
      const schemas = (await scim(api, t, 'get', '/Schemas')).body.Resources;
      const user = schemas.find((s: { id: string }) => s.id === SCIM.user);
      const names = user.attributes.map((a: { name: string }) => a.name);
      for (const n of ['nickName', 'profileUrl', 'userType', 'preferredLanguage', 'locale', 'timezone', 'phoneNumbers', 'addresses'])
        expect(names).toContain(n);
      expect(names).not.toContain('password');
      const name = user.attributes.find((a: { name: string }) => a.name === 'name');
      expect(name.subAttributes.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(['middleName', 'honorificPrefix', 'honorificSuffix']));
      const enterprise = schemas.find((s: { id: string }) => s.id === SCIM.enterprise);
      expect(enterprise.attributes.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(['costCenter', 'organization', 'division']));
    });
  });
});
