import { InvitationsService, PersonEntity } from '@features/people';
import { DataSource } from 'typeorm';
import { useApi } from './support/api';
import { entraUser, expectScimError, oktaUser, patchOp, rand, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';

const q = encodeURIComponent;

describe('SCIM Users', () => {
  const { api, mail } = useApi({ mail: true });
  let db: DataSource;
  beforeAll(() => {
    db = api.app.get(DataSource);
  });

  const person = (email: string) => db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:email)', { email }).getOne();
  const tokenOf = (text: string) => /invitations\/accept\?token=([A-Za-z0-9_-]{43})/.exec(text)![1];
  const create = async (t: ScimTenant, body: object) => {
    const res = await scim(api, t, 'post', '/Users', body);
    expect(res.status).toBe(201);
    return res.body;
  };

  describe('Okta', () => {
    it('looks the user up, creates it with its own body (password, groups, locale, externalId), gets 201 with the full user, 409 the second time', async () => {
      const t = await scimTenant(api);
      const email = `Test.User.${rand()}@${t.domain}`;
      const lookup = await scim(api, t, 'get', `/Users?filter=${q(`userName eq "${email}"`)}&startIndex=1&count=100`);
      expect(lookup.status).toBe(200);
      expect(lookup.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(lookup.body).toEqual({ schemas: [SCIM.list], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

      const body = oktaUser(email, '00ujl29u0le5T6Aj10h7');
      const created = await scim(api, t, 'post', '/Users', body);
      expect(created.status).toBe(201);
      expect(created.headers['content-type']).toMatch(/^application\/scim\+json/);
      const id = created.body.id;
      expect(id).toMatch(/^\d+$/);
      expect(created.headers.location).toBe(`${api.config.publicBaseUrl}/scim/v2/Users/${id}`);
      expect(created.body).toEqual({
        schemas: [SCIM.user],
        id,
        externalId: '00ujl29u0le5T6Aj10h7',
        userName: email,
        // As written: no name.formatted the client did not send; locale kept.
        name: { givenName: 'Test', familyName: 'User' },
        displayName: 'Test User',
        locale: 'en-US',
        active: true,
        emails: [{ value: email, type: 'work', primary: true }],
        groups: [],
        meta: { resourceType: 'User', created: expect.any(String), lastModified: expect.any(String), location: created.headers.location },
      });
      expect(JSON.stringify(created.body)).not.toContain('1mz050nq');
      // On a verified domain the person is created, as POST /v1/users does.
      expect(await person(email)).toMatchObject({ organisationId: t.organisationId, name: 'Test User', disabled: false });

      expectScimError(await scim(api, t, 'post', '/Users', body), 409, 'uniqueness');
      expectScimError(await scim(api, t, 'post', '/Users', { ...body, userName: email.toUpperCase(), externalId: 'other' }), 409, 'uniqueness');

      const found = await scim(api, t, 'get', `/Users?filter=${q(`userName eq "${email.toUpperCase()}"`)}&startIndex=1&count=100`);
      expect(found.body).toMatchObject({ totalResults: 1, itemsPerPage: 1, Resources: [{ id, userName: email }] });
    });

    it('deactivates and reactivates with {"op":"replace","value":{"active":false}}; the inactive user is still listed and readable', async () => {
      const t = await scimTenant(api);
      const email = `u-${rand()}@${t.domain}`;
      const { id } = await create(t, oktaUser(email));
      const off = await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', value: { active: false } }));
      expect(off.status).toBe(200);
      expect(off.body.active).toBe(false);
      expect(await person(email)).toMatchObject({ disabled: true, organisationId: t.organisationId });
      expect((await scim(api, t, 'get', `/Users/${id}`)).body.active).toBe(false);
      const listed = await scim(api, t, 'get', `/Users?filter=${q(`userName eq "${email}"`)}`);
      expect(listed.body.Resources).toEqual([expect.objectContaining({ id, active: false })]);
      const rest = await api
        .http()
        .get(`/v1/users/${(await person(email))!.id}`)
        .set(t.auth);
      expect(rest.body.data.disabled).toBe(true);

      const on = await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', value: { active: true } }));
      expect(on.body.active).toBe(true);
      expect(await person(email)).toMatchObject({ disabled: false });
    });

    it('updates by GET then PUT of the whole user', async () => {
      const t = await scimTenant(api);
      const { id } = await create(t, oktaUser(`u-${rand()}@${t.domain}`));
      const got = (await scim(api, t, 'get', `/Users/${id}`)).body;
      const put = await scim(api, t, 'put', `/Users/${id}`, {
        ...got,
        name: { givenName: 'Tess', familyName: 'User' },
        displayName: 'Tess User',
        title: 'Coordinator',
        password: 'x',
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ id, name: { givenName: 'Tess', familyName: 'User' }, displayName: 'Tess User', title: 'Coordinator', active: true });
      expect(put.body.name.formatted).toBeUndefined();
      expect(await person(got.userName)).toMatchObject({ name: 'Tess User', jobTitle: 'Coordinator' });
      // A PUT leaving an attribute out clears it (title), but `active` is kept when not sent.
      const cleared = await scim(api, t, 'put', `/Users/${id}`, { schemas: [SCIM.user], userName: got.userName });
      expect(cleared.status).toBe(200);
      expect(cleared.body.title).toBeUndefined();
      expect(cleared.body.externalId).toBeUndefined();
      expect(cleared.body.active).toBe(true);
    });

    it('imports by paging startIndex in steps of count until totalResults, in a stable order', async () => {
      const t = await scimTenant(api);
      for (let i = 0; i < 5; i++) await create(t, oktaUser(`p${i}-${rand()}@${t.domain}`));
      const seen: string[] = [];
      for (let start = 1; ; start += 2) {
        const page = await scim(api, t, 'get', `/Users?startIndex=${start}&count=2`);
        expect(page.status).toBe(200);
        expect(page.body.totalResults).toBe(5);
        expect(page.body.startIndex).toBe(start);
        expect(page.body.itemsPerPage).toBe(page.body.Resources.length);
        seen.push(...page.body.Resources.map((r: { id: string }) => r.id));
        if (start + 2 > page.body.totalResults) break;
      }
      expect(seen).toHaveLength(5);
      expect([...seen].sort((a, b) => Number(a) - Number(b))).toEqual(seen);
      expect((await scim(api, t, 'get', '/Users?startIndex=99&count=2')).body).toMatchObject({
        totalResults: 5,
        startIndex: 99,
        itemsPerPage: 0,
        Resources: [],
      });
      expect((await scim(api, t, 'get', '/Users?count=0')).body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
      expect((await scim(api, t, 'get', '/Users?startIndex=0&count=-4')).body).toMatchObject({ startIndex: 1, itemsPerPage: 0 });
      expect((await scim(api, t, 'get', '/Users')).body.itemsPerPage).toBe(5);
    });
  });

  describe('Entra ID', () => {
    it('test connection: a filter on a random value answers 200 with an empty list', async () => {
      const t = await scimTenant(api);
      for (const filter of [`userName eq "${rand()}-${rand()}"`, `externalId eq "${rand()}"`, `emails[type eq "work"].value eq "${rand()}@x.example"`]) {
        const res = await scim(api, t, 'get', `/Users?filter=${q(filter)}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ schemas: [SCIM.list], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
      }
    });

    it('creates with its body (addresses, phone numbers, preferredLanguage and enterprise kept) and matches on userName, externalId or work email', async () => {
      const t = await scimTenant(api);
      const email = `ana.${rand()}@${t.domain}`;
      const body = entraUser(email, 'ana-object-id');
      const created = await create(t, body);
      expect(created).toMatchObject({
        schemas: [SCIM.user, SCIM.enterprise],
        externalId: 'ana-object-id',
        userName: email,
        displayName: 'Ana López',
        title: 'Nurse',
        name: { formatted: 'Ana López', familyName: 'López', givenName: 'Ana' },
        [SCIM.enterprise]: { employeeNumber: '1001', department: 'Care' },
      });
      // Kept and answered as sent (Entra re-sends what an answer lacks).
      expect(created).toMatchObject({ addresses: body.addresses, phoneNumbers: body.phoneNumbers, preferredLanguage: 'en-US' });
      for (const filter of [
        `userName eq "${email}"`,
        'externalId eq "ana-object-id"',
        `emails[type eq "work"].value eq "${email.toUpperCase()}"`,
        `emails.value eq "${email}"`,
        `displayName eq "ana lópez" and externalId eq "ana-object-id"`,
      ]) {
        const res = await scim(api, t, 'get', `/Users?filter=${q(filter)}`);
        expect({ filter, ids: res.body.Resources?.map((r: { id: string }) => r.id) }).toEqual({ filter, ids: [created.id] });
      }
      expect((await scim(api, t, 'get', `/Users?filter=${q('externalId eq "ANA-OBJECT-ID"')}`)).body.totalResults).toBe(0);
      expectScimError(await scim(api, t, 'post', '/Users', entraUser(`other.${rand()}@${t.domain}`, 'ana-object-id')), 409, 'uniqueness');
    });

    it('updates with capitalised ops, string booleans, dotted and URN keys, filtered email paths and the manager by URN path', async () => {
      const t = await scimTenant(api);
      const manager = await create(t, entraUser(`boss.${rand()}@${t.domain}`));
      const email = `ana.${rand()}@${t.domain}`;
      const { id } = await create(t, entraUser(email));

      const res = await scim(
        api,
        t,
        'patch',
        `/Users/${id}`,
        patchOp(
          { op: 'Replace', path: 'displayName', value: 'Ana María López' },
          { op: 'Replace', path: 'emails[type eq "work"].value', value: `ana.maria@${t.domain}` },
          { op: 'Replace', path: 'name.givenName', value: 'Ana María' },
          { op: 'Add', path: `${SCIM.enterprise}:manager`, value: manager.id },
          { op: 'Replace', path: 'title', value: 'Senior Nurse' },
          { op: 'Replace', value: { 'name.familyName': 'López García', [`${SCIM.enterprise}:employeeNumber`]: '1002', active: 'False' } },
        ),
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id,
        userName: email,
        displayName: 'Ana María López',
        title: 'Senior Nurse',
        active: false,
        name: { givenName: 'Ana María', familyName: 'López García' },
        emails: [{ type: 'work', value: `ana.maria@${t.domain}`, primary: true }],
        [SCIM.enterprise]: {
          employeeNumber: '1002',
          department: 'Care',
          manager: { value: manager.id, $ref: `${api.config.publicBaseUrl}/scim/v2/Users/${manager.id}` },
        },
      });
      expect(await person(email)).toMatchObject({ name: 'Ana María López', jobTitle: 'Senior Nurse', disabled: true });
      const byWorkEmail = await scim(api, t, 'get', `/Users?filter=${q(`emails[type eq "work"].value eq "ana.maria@${t.domain}"`)}`);
      expect(byWorkEmail.body.Resources.map((r: { id: string }) => r.id)).toEqual([id]);

      // Deactivated users are still returned; lowercase string booleans too.
      expect((await scim(api, t, 'get', `/Users/${id}`)).body.active).toBe(false);
      const back = await scim(
        api,
        t,
        'patch',
        `/Users/${id}`,
        patchOp({ op: 'Replace', path: 'active', value: 'true' }, { op: 'Remove', path: `${SCIM.enterprise}:manager` }),
      );
      expect(back.body.active).toBe(true);
      expect(back.body[SCIM.enterprise].manager).toBeUndefined();
    });

    it('only a DELETE makes a user 404; it takes the person out of the organisation (the account remains)', async () => {
      const t = await scimTenant(api);
      const email = `gone.${rand()}@${t.domain}`;
      const { id } = await create(t, entraUser(email));
      await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'Replace', path: 'active', value: 'False' }));
      expect((await scim(api, t, 'get', `/Users/${id}`)).status).toBe(200);
      const del = await scim(api, t, 'delete', `/Users/${id}`);
      expect(del.status).toBe(204);
      expect(del.text ?? '').toBe('');
      expectScimError(await scim(api, t, 'get', `/Users/${id}`), 404);
      expectScimError(await scim(api, t, 'delete', `/Users/${id}`), 404);
      expect((await scim(api, t, 'get', `/Users?filter=${q(`userName eq "${email}"`)}`)).body.totalResults).toBe(0);
      expect(await person(email)).toMatchObject({ organisationId: null, disabled: false });
      // Created again: a new user with a new id.
      const again = await create(t, entraUser(email));
      expect(again.id).not.toBe(id);
    });
  });

  describe('invited addresses', () => {
    it('an address off the verified domains is invited (source scim); on accepting it keeps its SCIM id and user.joined is sent', async () => {
      const t = await scimTenant(api);
      const email = `guest.${rand()}@elsewhere.example`;
      const created = await create(t, { ...oktaUser(email), title: 'Interpreter' });
      expect(created).toMatchObject({ userName: email, active: true, displayName: 'Test User', title: 'Interpreter' });
      expect(await person(email)).toBeNull();
      const [inv] = await db.query(`SELECT id, source, connection_id FROM invitations WHERE lower(email) = lower($1) AND status = 'pending'`, [email]);
      expect(inv).toMatchObject({ source: 'scim', connection_id: t.connectionId });
      expectScimError(await scim(api, t, 'post', '/Users', oktaUser(email)), 409, 'uniqueness');

      const token = tokenOf((await mail.waitFor(email)).text);
      const { person: joined } = await api.app.get(InvitationsService).accept({ token });
      const events = await db.query(`SELECT data FROM outbox_events WHERE organisation_id = $1 AND event = 'user.joined'`, [t.organisationId]);
      expect(events.map((e: { data: unknown }) => e.data)).toEqual([{ user_id: joined.id }]);

      const after = await scim(api, t, 'get', `/Users/${created.id}`);
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ id: created.id, userName: email, active: true, externalId: created.externalId, title: 'Interpreter' });
      expect(await person(email)).toMatchObject({ organisationId: t.organisationId, jobTitle: 'Interpreter' });
    });

    it('active:false withdraws the invitation and keeps the user listed; active:true invites again; DELETE withdraws', async () => {
      const t = await scimTenant(api);
      const email = `inv.${rand()}@elsewhere.example`;
      const { id } = await create(t, oktaUser(email));
      const off = await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', value: { active: false } }));
      expect(off.status).toBe(200);
      expect(off.body.active).toBe(false);
      expect((await api.http().get('/v1/invitations').set(t.auth)).body.data).toEqual([]);
      expect((await scim(api, t, 'get', `/Users?filter=${q(`userName eq "${email}"`)}`)).body.Resources).toEqual([
        expect.objectContaining({ id, active: false }),
      ]);

      const on = await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', value: { active: true } }));
      expect(on.body).toMatchObject({ id, active: true });
      expect(await mail.waitForCount(email, 2)).toHaveLength(2);
      expect((await api.http().get('/v1/invitations').set(t.auth)).body.data.map((i: { email: string }) => i.email)).toEqual([email]);

      expect((await scim(api, t, 'delete', `/Users/${id}`)).status).toBe(204);
      expect((await api.http().get('/v1/invitations').set(t.auth)).body.data).toEqual([]);
      expectScimError(await scim(api, t, 'get', `/Users/${id}`), 404);
    });

    it('people and invitations made through REST are SCIM users too', async () => {
      const t = await scimTenant(api);
      const member = `rest.${rand()}@${t.domain}`;
      const guest = `rest.${rand()}@elsewhere.example`;
      expect((await api.http().post('/v1/users').set(t.auth).send({ email: member, name: 'Rest Member' })).status).toBe(201);
      expect((await api.http().post('/v1/users').set(t.auth).send({ email: guest })).status).toBe(202);
      const list = await scim(api, t, 'get', '/Users');
      expect(list.body.Resources.map((r: { userName: string; displayName?: string }) => [r.userName, r.displayName])).toEqual([
        [member, 'Rest Member'],
        [guest, undefined],
      ]);
      expect(list.body.Resources[0].name).toEqual({ formatted: 'Rest Member' });
    });
  });

  describe('totalResults', () => {
    it('counts exactly the users a full listing holds, whatever backs them', async () => {
      const t = await scimTenant(api);
      await create(t, oktaUser(`a.${rand()}@${t.domain}`));
      const disabled = await create(t, oktaUser(`b.${rand()}@${t.domain}`));
      await scim(api, t, 'patch', `/Users/${disabled.id}`, patchOp({ op: 'replace', value: { active: false } }));
      await create(t, oktaUser(`c.${rand()}@elsewhere.example`));
      const parked = await create(t, oktaUser(`d.${rand()}@elsewhere.example`));
      await scim(api, t, 'patch', `/Users/${parked.id}`, patchOp({ op: 'replace', value: { active: false } }));
      const deleted = await create(t, oktaUser(`e.${rand()}@${t.domain}`));
      await scim(api, t, 'delete', `/Users/${deleted.id}`);
      const leaver = `f.${rand()}@${t.domain}`;
      await create(t, oktaUser(leaver));
      await api
        .http()
        .delete(`/v1/users/${(await person(leaver))!.id}`)
        .set(t.auth)
        .expect(204);
      const withdrawn = `g.${rand()}@elsewhere.example`;
      const inv = await api.http().post('/v1/users').set(t.auth).send({ email: withdrawn });
      await api.http().delete(`/v1/invitations/${inv.body.data.id}`).set(t.auth).expect(204);

      const all = (await scim(api, t, 'get', '/Users?count=1000')).body;
      expect(all.Resources.map((r: { active: boolean }) => r.active)).toEqual([true, false, true, false]);
      expect(all.totalResults).toBe(4);
      expect((await scim(api, t, 'get', '/Users?count=1&startIndex=2')).body).toMatchObject({
        totalResults: 4,
        itemsPerPage: 1,
        Resources: [{ id: disabled.id }],
      });
    });
  });

  describe('attributes and excludedAttributes', () => {
    it('apply to reads, lists and write answers', async () => {
      const t = await scimTenant(api);
      const created = await create(t, entraUser(`p.${rand()}@${t.domain}`));
      const one = await scim(api, t, 'get', `/Users/${created.id}?attributes=userName,name.givenName,${q(`${SCIM.enterprise}:department`)}`);
      expect(one.body).toEqual({
        schemas: created.schemas,
        id: created.id,
        userName: created.userName,
        name: { givenName: 'Ana' },
        [SCIM.enterprise]: { department: 'Care' },
      });
      const list = await scim(api, t, 'get', `/Users?excludedAttributes=emails,meta,groups,${SCIM.enterprise}`);
      const { emails, meta, groups, [SCIM.enterprise]: ent, ...rest } = created;
      expect([emails, meta, groups, ent].every((v) => v !== undefined)).toBe(true);
      expect(list.body.Resources).toEqual([rest]);
      const patched = await scim(api, t, 'patch', `/Users/${created.id}?attributes=title`, patchOp({ op: 'replace', path: 'title', value: 'Lead' }));
      expect(patched.body).toEqual({ schemas: created.schemas, id: created.id, title: 'Lead' });
    });
  });

  describe('errors (RFC 7644 §3.12: status as a string, scimType where defined)', () => {
    it('malformed JSON → 400 invalidSyntax; a body without the User schema → 400 invalidSyntax', async () => {
      const t = await scimTenant(api);
      expectScimError(await scim(api, t, 'post', '/Users', '{"userName": '), 400, 'invalidSyntax');
      expectScimError(await scim(api, t, 'post', '/Users', { userName: `a.${rand()}@${t.domain}` }), 400, 'invalidSyntax');
      const plainJson = await api
        .http()
        .post('/scim/v2/Users')
        .set(t.auth)
        .send(oktaUser(`j.${rand()}@${t.domain}`));
      expect(plainJson.status).toBe(201);
    });

    it("missing or invalid values → 422 invalidValue (the contract's validation_failed)", async () => {
      const t = await scimTenant(api);
      expectScimError(await scim(api, t, 'post', '/Users', { schemas: [SCIM.user], name: { givenName: 'x' } }), 422, 'invalidValue');
      expectScimError(await scim(api, t, 'post', '/Users', { schemas: [SCIM.user], userName: 'not-an-address' }), 422, 'invalidValue');
      expectScimError(await scim(api, t, 'post', '/Users', { ...oktaUser(`b.${rand()}@${t.domain}`), active: 'perhaps' }), 422, 'invalidValue');
      const { id } = await create(t, oktaUser(`c.${rand()}@${t.domain}`));
      expectScimError(
        await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'add', path: `${SCIM.enterprise}:manager`, value: '999999999' })),
        422,
        'invalidValue',
      );
      expectScimError(await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'add', path: `${SCIM.enterprise}:manager`, value: id })), 422, 'invalidValue');
      // A NUL character (which Postgres cannot store) in any attribute, also through PATCH; nothing changes.
      expectScimError(await scim(api, t, 'post', '/Users', { ...oktaUser(`n.${rand()}@${t.domain}`), externalId: 'x\u0000' }), 422, 'invalidValue');
      const nul = await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: '\u0000' }));
      expectScimError(nul, 422, 'invalidValue');
      expect(nul.body.detail).toContain('Operations[0].value');
      expect((await scim(api, t, 'get', `/Users/${id}`)).body.title).not.toBe('\u0000');
    });

    it('PATCH: invalidPath, noTarget, mutability, invalidSyntax; a failing operation changes nothing', async () => {
      const t = await scimTenant(api);
      const created = await create(t, oktaUser(`d.${rand()}@${t.domain}`));
      const path = `/Users/${created.id}`;
      expectScimError(await scim(api, t, 'patch', path, patchOp({ op: 'replace', path: 'favouriteColour', value: 'red' })), 400, 'invalidPath');
      expectScimError(await scim(api, t, 'patch', path, patchOp({ op: 'remove' })), 400, 'noTarget');
      expectScimError(await scim(api, t, 'patch', path, patchOp({ op: 'replace', path: 'userName', value: `new.${rand()}@${t.domain}` })), 400, 'mutability');
      expectScimError(await scim(api, t, 'patch', path, patchOp({ op: 'replace', path: 'groups', value: [] })), 400, 'mutability');
      expectScimError(await scim(api, t, 'patch', path, { Operations: [{ op: 'replace', path: 'title', value: 'x' }] }), 400, 'invalidSyntax');
      expectScimError(
        await scim(api, t, 'patch', path, patchOp({ op: 'replace', path: 'title', value: 'Changed' }, { op: 'replace', path: 'nope', value: 1 })),
        400,
        'invalidPath',
      );
      const after = (await scim(api, t, 'get', path)).body;
      expect(after.title).toBeUndefined();
      expect(after.meta.lastModified).toBe(created.meta.lastModified);
    });

    it('unsupported filters → 400 invalidFilter', async () => {
      const t = await scimTenant(api);
      for (const filter of ['userName sw "a"', 'userName eq "a" or userName eq "b"', 'title eq "x"', 'userName eq']) {
        expectScimError(await scim(api, t, 'get', `/Users?filter=${q(filter)}`), 400, 'invalidFilter');
      }
    });

    it('concurrent adds of one address (SCIM and REST, created or invited) make one user: the others answer 409 or 200, never 500', async () => {
      const t = await scimTenant(api);
      for (const address of [`race.${rand()}@${t.domain}`, `race.${rand()}@elsewhere-${rand()}.example`]) {
        const answers = await Promise.all([
          ...Array.from({ length: 6 }, () => scim(api, t, 'post', '/Users', oktaUser(address))),
          ...Array.from({ length: 3 }, () => api.http().post('/v1/users').set(t.auth).send({ email: address })),
        ]);
        const viaScim = answers.slice(0, 6).map((r) => r.status);
        const viaRest = answers.slice(6).map((r) => r.status);
        // SCIM: at most one POST made the user, the others found it (409 uniqueness).
        expect(viaScim.filter((s) => s === 201).length).toBeLessThanOrEqual(1);
        expect(viaScim.every((s) => s === 201 || s === 409)).toBe(true);
        // REST: one add made the person or invitation (201 / 202), the others answer it again (200 / 202).
        expect(viaRest.filter((s) => s === 201).length).toBeLessThanOrEqual(1);
        expect(viaRest.every((s) => [200, 201, 202].includes(s))).toBe(true);
        expect(viaScim.includes(201) && viaRest.includes(201)).toBe(false);
        const listed = await scim(api, t, 'get', `/Users?filter=${encodeURIComponent(`userName eq "${address}"`)}`);
        expect(listed.body.totalResults).toBe(1);
      }
    });

    it('a person already in another organisation → 409 uniqueness', async () => {
      const a = await scimTenant(api);
      const b = await scimTenant(api);
      const email = `taken.${rand()}@${a.domain}`;
      await create(a, oktaUser(email));
      expectScimError(await scim(api, b, 'post', '/Users', oktaUser(email)), 409, 'uniqueness');
    });

    it("another organisation's user, an unknown id and a non-digit id → 404", async () => {
      const a = await scimTenant(api);
      const b = await scimTenant(api);
      const { id } = await create(a, oktaUser(`mine.${rand()}@${a.domain}`));
      for (const [method, body] of [
        ['get'],
        ['put', oktaUser(`x.${rand()}@${b.domain}`)],
        ['patch', patchOp({ op: 'replace', value: { active: false } })],
        ['delete'],
      ] as const) {
        expectScimError(await scim(api, b, method, `/Users/${id}`, body), 404);
      }
      expectScimError(await scim(api, a, 'get', '/Users/999999999999'), 404);
      expectScimError(await scim(api, a, 'get', '/Users/abc'), 404);
      expectScimError(await scim(api, a, 'get', `/Users/0${id}`), 404);
      expect((await scim(api, a, 'get', `/Users/${id}`)).body.active).toBe(true);
    });

    it('the last person able to manage people cannot be deactivated or deleted → 409', async () => {
      const t = await scimTenant(api);
      const email = `mgr.${rand()}@${t.domain}`;
      const { id } = await create(t, oktaUser(email));
      const [g] = await db.query(`INSERT INTO groups (organisation_id, name, permissions) VALUES ($1, $2, '{people.manage}') RETURNING id`, [
        t.organisationId,
        `Managers ${rand()}`,
      ]);
      await db.query(`UPDATE people SET group_id = $1 WHERE lower(email) = lower($2)`, [g.id, email]);
      expectScimError(await scim(api, t, 'patch', `/Users/${id}`, patchOp({ op: 'replace', value: { active: false } })), 409);
      expectScimError(await scim(api, t, 'delete', `/Users/${id}`), 409);
      expect((await scim(api, t, 'get', `/Users/${id}`)).body).toMatchObject({ active: true, groups: [{ value: String(g.id), type: 'direct' }] });
    });
  });
});
