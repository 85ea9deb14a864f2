import { Scope } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { DomainsService } from '@features/organisations';
import { GroupEntity } from '@features/groups';
import { InvitationEntity, InvitationsService, joinOrganisation, PeopleAdder, PersonEntity } from '@features/people';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, useApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';

type Res = { status: number; body: any; text: string; headers: Record<string, string> };
type Method = 'get' | 'post' | 'patch' | 'delete';

describe('People and invitations', () => {
  const { api, mail } = useApi({ mail: true });
  let db: DataSource;
  let checker: OpenApiChecker;
  let doc: any;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    db = api.app.get(DataSource);
    doc = (await api.http().get('/v1/openapi.json')).body;
    checker = new OpenApiChecker(doc);
  });

  const call = (t: Tenant, method: Method, path: string, body?: unknown, key?: string): Promise<Res> => {
    let req = api.http()[method](path).set(t.auth);
    if (key) req = req.set('Idempotency-Key', key);
    return (body === undefined ? req : req.send(body as object)) as unknown as Promise<Res>;
  };
  const expectError = (res: Res, status: number, code: string, method: string, template: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check(method, template, status, res.body);
  };
  const tenant = async (scopes?: readonly Scope[]) => {
    const t = await makeTenant(api.app, scopes);
    return { ...t, domain: `d${rand()}.example` };
  };
  const verify = (t: Tenant & { domain: string }) => new DomainsService(api.app.get(TransactionHost)).add(t.organisationId, t.domain);
  const seedGroup = async (organisationId: string, permissions: string[] = []) => {
    const repo = db.getRepository(GroupEntity);
    return repo.save(repo.create({ organisationId, name: `Group ${rand()}`, permissions: [...permissions].sort() }));
  };
  const seedPerson = async (organisationId: string | null, opts: Partial<PersonEntity> = {}) => {
    const repo = db.getRepository(PersonEntity);
    return repo.save(repo.create({ organisationId, email: `p-${rand()}@seed.example`, name: 'Seeded', joinedAt: organisationId ? new Date() : null, ...opts }));
  };
  const account = (email: string) => db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = lower(:email)', { email }).getOne();
  const userJoined = async (organisationId: string) =>
    (await db.query(`SELECT data FROM outbox_events WHERE organisation_id = $1 AND event = 'user.joined' ORDER BY occurred_at`, [organisationId])).map(
      (r: { data: unknown }) => r.data,
    );
  const tokenOf = (text: string) => {
    const link = new RegExp(`${api.config.publicBaseUrl.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/invitations/accept\\?token=([A-Za-z0-9_-]{43})`).exec(text);
    if (!link) throw new Error(`no accept link in:\n${text}`);
    return link[1];
  };
  const invite = async (t: Tenant, body: Record<string, unknown> = {}) => {
    const email = `inv-${rand()}@elsewhere.example`;
    const res = await call(t, 'post', '/v1/users', { email, ...body });
    expect(res.status).toBe(202);
    return { email, invitation: res.body.data, token: tokenOf((await mail.waitFor(email)).text) };
  };
  const page = (token: string) => api.http().get(`/invitations/accept?token=${encodeURIComponent(token)}`) as unknown as Promise<Res>;
  const submit = (form: Record<string, string>) => api.http().post('/invitations/accept').type('form').send(form) as unknown as Promise<Res>;

  describe('POST /v1/users: adding by address', () => {
    it('the person a join answers (from its write, without reading it back) is the one a read of it gives', async () => {
      const t = await tenant();
      const people = db.getRepository(PersonEntity);
      for (const fromAccount of [false, true]) {
        const address = `Joined.${rand()}@Example.org`;
        let account: PersonEntity | null = null;
        if (fromAccount) {
          const [{ id }] = await db.query(`INSERT INTO people (email, name, disabled) VALUES ($1, 'Old name', true) RETURNING id`, [address]);
          account = await people.findOneByOrFail({ id: String(id) });
        }
        const joined = await db.transaction((m) => joinOrganisation(m, account, address, t.organisationId, { name: 'Ana', jobTitle: 'Nurse', groupId: null }));
        expect(joined).toBeInstanceOf(PersonEntity);
        expect(joined).toEqual(await people.findOneByOrFail({ id: joined!.id }));
        expect(joined).toMatchObject({ email: address, name: 'Ana', jobTitle: 'Nurse', organisationId: t.organisationId, disabled: false });
        expect(joined!.joinedAt).toBeInstanceOf(Date);
      }
    });

    it('already a member → 200 {data: Person}, unchanged, whatever the case of the address', async () => {
      const t = await tenant();
      const p = await seedPerson(t.organisationId, { email: `Ana.${rand()}@Member.example`, jobTitle: 'Nurse' });
      const res = await call(t, 'post', '/v1/users', { email: p.email.toUpperCase(), name: 'Other name' });
      expect(res.status).toBe(200);
      checker.check('POST', '/v1/users', 200, res.body);
      expect(res.body).toEqual({
        data: {
          id: p.id,
          email: p.email,
          name: 'Seeded',
          job_title: 'Nurse',
          group_id: null,
          disabled: false,
          joined_at: p.joinedAt!.toISOString(),
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      });
      await new Promise((r) => setTimeout(r, 200)); // mail goes out after the answer
      expect(mail.to(p.email)).toHaveLength(0);
    });

    it('a member of another organisation → 409 in_another_organisation, nothing made', async () => {
      const [t, other] = [await tenant(), await tenant()];
      await verify(t);
      const p = await seedPerson(other.organisationId, { email: `x-${rand()}@${t.domain}` });
      const res = await call(t, 'post', '/v1/users', { email: p.email });
      expectError(res, 409, 'in_another_organisation', 'POST', '/v1/users');
      expect((await account(p.email))!.organisationId).toBe(other.organisationId);
      expect(await db.getRepository(InvitationEntity).countBy({ organisationId: t.organisationId })).toBe(0);
    });

    it('no account on a verified domain → 201 {status: "created"}, the account made, a welcome email', async () => {
      const t = await tenant();
      await verify(t);
      const g = await seedGroup(t.organisationId, ['conversations.start']);
      const email = `New.Person-${rand()}@${t.domain.toUpperCase()}`;
      const res = await call(t, 'post', '/v1/users', { email, name: 'New Person', job_title: 'Interpreter', group_id: g.id });
      expect(res.status).toBe(201);
      checker.check('POST', '/v1/users', 201, res.body);
      const stored = email.replace(/@.*/, `@${t.domain}`);
      expect(res.body).toEqual({
        status: 'created',
        data: {
          id: expect.stringMatching(/^\d+$/),
          email: stored,
          name: 'New Person',
          job_title: 'Interpreter',
          group_id: g.id,
          disabled: false,
          joined_at: expect.stringMatching(/Z$/),
          created_at: expect.stringMatching(/Z$/),
          updated_at: expect.stringMatching(/Z$/),
        },
      });
      const got = await call(t, 'get', `/v1/users/${res.body.data.id}`);
      expect(got.body.data).toEqual(res.body.data);
      const welcome = await mail.waitFor(stored);
      expect(welcome.subject).toContain('You have been added to');
      expect(welcome.text).toContain(api.config.memberAppBaseUrl);
      expect(await db.getRepository(InvitationEntity).countBy({ organisationId: t.organisationId })).toBe(0);
    });

    it('otherwise → 202 {status: "invited"} with an emailed accept link; the token is stored hashed; a repeat answers the same invitation', async () => {
      const t = await tenant();
      const g = await seedGroup(t.organisationId);
      const email = `guest-${rand()}@elsewhere.example`;
      const res = await call(t, 'post', '/v1/users', { email, name: 'Guest', job_title: 'Advisor', group_id: g.id });
      expect(res.status).toBe(202);
      checker.check('POST', '/v1/users', 202, res.body);
      const inv = res.body.data;
      expect(res.body).toEqual({
        status: 'invited',
        data: {
          id: expect.stringMatching(/^\d+$/),
          email,
          name: 'Guest',
          job_title: 'Advisor',
          group_id: g.id,
          status: 'pending',
          created_at: expect.stringMatching(/Z$/),
          expires_at: expect.stringMatching(/Z$/),
          updated_at: expect.stringMatching(/Z$/),
        },
      });
      expect(Date.parse(inv.expires_at) - Date.parse(inv.created_at)).toBe(api.config.invitationTtlDays * 86_400_000);
      const caught = await mail.waitFor(email);
      expect(caught.subject).toContain('Invitation to join');
      const token = tokenOf(caught.text);
      const row = await db.getRepository(InvitationEntity).findOneByOrFail({ id: inv.id });
      expect(row).toMatchObject({ tokenHash: createHash('sha256').update(token).digest('hex'), source: 'api', connectionId: t.connectionId });
      expect(JSON.stringify(await db.query(`SELECT * FROM invitations WHERE id = $1`, [inv.id]))).not.toContain(token);
      expect(await account(email)).toBeNull();

      const again = await call(t, 'post', '/v1/users', { email: email.toUpperCase() });
      expect(again.status).toBe(202);
      expect(again.body).toEqual(res.body);
      await new Promise((r) => setTimeout(r, 200));
      expect(mail.to(email)).toHaveLength(1);
      const listed = await call(t, 'get', '/v1/invitations');
      checker.check('GET', '/v1/invitations', 200, listed.body);
      expect(listed.body).toEqual({ data: [inv], next_cursor: null });
    });

    it('once the domain is verified, adding an invited address makes the member and retires the invitation', async () => {
      const t = await tenant();
      const email = `early-${rand()}@${t.domain}`;
      const invited = await call(t, 'post', '/v1/users', { email });
      expect(invited.status).toBe(202);
      await verify(t);
      const created = await call(t, 'post', '/v1/users', { email });
      expect(created.status).toBe(201);
      expect((await call(t, 'get', '/v1/invitations')).body.data).toEqual([]);
      const token = tokenOf((await mail.waitFor(email)).text);
      expect((await page(token)).status).toBe(410);
    });

    it('an account in no organisation off the verified domains is invited, not taken', async () => {
      const t = await tenant();
      const loose = await seedPerson(null, { email: `loose-${rand()}@elsewhere.example` });
      const res = await call(t, 'post', '/v1/users', { email: loose.email });
      expect(res.status).toBe(202);
      expect((await account(loose.email))!.organisationId).toBeNull();
    });

    it('refuses a bad body (422 naming the field) and a group carrying organisation.own (403), making nothing', async () => {
      const [t, other] = [await tenant(), await tenant()];
      const owners = await seedGroup(t.organisationId, ['organisation.own', 'people.manage']);
      const foreign = await seedGroup(other.organisationId);
      const cases: Array<[unknown, string]> = [
        [{ email: 'not-an-address' }, 'email:'],
        [{ email: 'a@localhost' }, 'email:'],
        [{}, 'email:'],
        [{ email: `a-${rand()}@x.example`, role: 'admin' }, 'role: is not a known field'],
        [{ email: `a-${rand()}@x.example`, group_id: '999999999' }, 'group_id: no such group'],
        [{ email: `a-${rand()}@x.example`, group_id: foreign.id }, 'group_id: no such group'],
        [{ email: `a-${rand()}@x.example`, group_id: 'abc' }, 'group_id:'],
        [{ email: `a-${rand()}@x.example`, name: '   ' }, 'name:'],
        [{ email: `a-${rand()}@x.example`, name: null }, 'name:'],
      ];
      for (const [body, message] of cases) {
        const res = await call(t, 'post', '/v1/users', body);
        expectError(res, 422, 'validation_failed', 'POST', '/v1/users');
        expect(res.body.error.message).toContain(message);
      }
      const denied = await call(t, 'post', '/v1/users', { email: `boss-${rand()}@x.example`, group_id: owners.id });
      expectError(denied, 403, 'permission_not_grantable', 'POST', '/v1/users');
      expect(await db.getRepository(InvitationEntity).countBy({ organisationId: t.organisationId })).toBe(0);
    });

    it('is IK: a replay answers the same status and body, with one invitation and one email', async () => {
      const t = await tenant();
      const email = `ik-${rand()}@elsewhere.example`;
      const first = await call(t, 'post', '/v1/users', { email }, 'add-once');
      const second = await call(t, 'post', '/v1/users', { email }, 'add-once');
      expect([first.status, second.status]).toEqual([202, 202]);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const reused = await call(t, 'post', '/v1/users', { email: `other-${email}` }, 'add-once');
      expectError(reused, 422, 'idempotency_key_reused', 'POST', '/v1/users');
      expect(await db.getRepository(InvitationEntity).countBy({ organisationId: t.organisationId })).toBe(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(mail.to(email)).toHaveLength(1);
    });

    it('concurrent adds of one address make one account (and concurrent invites one invitation)', async () => {
      const t = await tenant();
      await verify(t);
      const email = `race-${rand()}@${t.domain}`;
      const results = await Promise.all(Array.from({ length: 6 }, () => call(t, 'post', '/v1/users', { email })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
      expect(await db.getRepository(PersonEntity).createQueryBuilder('p').where('lower(p.email) = :email', { email }).getCount()).toBe(1);

      const guest = `race-${rand()}@elsewhere.example`;
      const invited = await Promise.all(Array.from({ length: 6 }, () => call(t, 'post', '/v1/users', { email: guest })));
      expect(invited.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
      expect(new Set(invited.map((r) => r.body.data.id)).size).toBe(1);
      expect(await db.getRepository(InvitationEntity).countBy({ organisationId: t.organisationId })).toBe(1);
    });

    it('needs users:write', async () => {
      const t = await tenant(['users:read']);
      expectError(await call(t, 'post', '/v1/users', { email: `s-${rand()}@x.example` }), 403, 'scope_missing', 'POST', '/v1/users');
    });
  });

  describe('accepting an invitation through the page (real HTTPS requests)', () => {
    it("GET shows the form; POST makes the person a member with the invitation's group and job title, and emits user.joined", async () => {
      const t = await tenant();
      const g = await seedGroup(t.organisationId, ['cases.read_all']);
      const { email, invitation, token } = await invite(t, { name: 'Invited Name', job_title: 'Coordinator', group_id: g.id });

      const shown = await page(token);
      expect(shown.status).toBe(200);
      expect(shown.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(shown.headers['referrer-policy']).toBe('no-referrer');
      expect(shown.text).toContain('<form method="post" action="/invitations/accept">');
      expect(shown.text).toContain(`<input type="hidden" name="token" value="${token}">`);
      expect(shown.text).toContain('name="name"');
      expect(shown.text).toContain(email);
      expect(await account(email)).toBeNull();

      const done = await submit({ token, name: 'Typed Name' });
      expect(done.status).toBe(200);
      expect(done.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(done.text).toContain('You are now a member');
      const person = (await account(email))!;
      expect(person).toMatchObject({ organisationId: t.organisationId, groupId: g.id, name: 'Typed Name', jobTitle: 'Coordinator', disabled: false });
      const got = await call(t, 'get', `/v1/users/${person.id}`);
      expect(got.status).toBe(200);
      checker.check('GET', '/v1/users/{id}', 200, got.body);
      expect((await call(t, 'get', '/v1/invitations')).body.data.map((i: { id: string }) => i.id)).not.toContain(invitation.id);
      expect(await userJoined(t.organisationId)).toEqual([{ user_id: person.id }]);

      // Used: the link now answers a clear page and changes nothing.
      const reused = await submit({ token, name: 'Again' });
      expect(reused.status).toBe(410);
      expect(reused.text).toContain('already been accepted');
      expect((await page(token)).status).toBe(410);
      expect(await userJoined(t.organisationId)).toHaveLength(1);
      expect((await account(email))!.name).toBe('Typed Name');
    });

    it('a withdrawn, expired or unknown token answers a clear page (410/410/404) and changes nothing', async () => {
      const t = await tenant();
      const withdrawn = await invite(t);
      expect((await call(t, 'delete', `/v1/invitations/${withdrawn.invitation.id}`)).status).toBe(204);
      for (const res of [await page(withdrawn.token), await submit({ token: withdrawn.token, name: 'X' })]) {
        expect(res.status).toBe(410);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.text).toContain('withdrawn');
      }

      const expired = await invite(t);
      await db.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.invitation.id]);
      const listed = await call(t, 'get', '/v1/invitations');
      checker.check('GET', '/v1/invitations', 200, listed.body);
      expect(listed.body.data.find((i: { id: string }) => i.id === expired.invitation.id).status).toBe('expired');
      for (const res of [await page(expired.token), await submit({ token: expired.token })]) {
        expect(res.status).toBe(410);
        expect(res.text).toContain('expired');
      }

      for (const res of [await page('A'.repeat(43)), await page('not a token'), await submit({ token: 'A'.repeat(43) }), await submit({})]) {
        expect(res.status).toBe(404);
        expect(res.text).toContain('No such invitation');
      }
      expect(await account(withdrawn.email)).toBeNull();
      expect(await account(expired.email)).toBeNull();
      expect(await userJoined(t.organisationId)).toEqual([]);

      // Adding the address again replaces the expired invitation with a new one and a new link.
      const again = await call(t, 'post', '/v1/users', { email: expired.email });
      expect(again.status).toBe(202);
      expect(again.body.data.id).not.toBe(expired.invitation.id);
      expect((await db.getRepository(InvitationEntity).findOneByOrFail({ id: expired.invitation.id })).status).toBe('withdrawn');
    });

    it('escapes everything it shows', async () => {
      const t = await makeTenant(api.app, undefined, `<script>alert("x")</script> & O'Brien`);
      const { token } = await invite(t, { name: '"><img src=x onerror=alert(1)>' });
      const shown = await page(token);
      expect(shown.status).toBe(200);
      expect(shown.text).not.toContain('<script>alert');
      expect(shown.text).not.toContain('<img');
      expect(shown.text).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; O&#39;Brien');
    });

    it('an address that joined another organisation meanwhile: 409 page, no outbox row, the invitation still pending', async () => {
      const [a, b] = [await tenant(), await tenant()];
      await verify(b);
      const email = `moved-${rand()}@${b.domain}`;
      const res = await call(a, 'post', '/v1/users', { email });
      expect(res.status).toBe(202);
      const token = tokenOf((await mail.waitFor(email)).text);
      expect((await call(b, 'post', '/v1/users', { email })).status).toBe(201);

      const refused = await submit({ token, name: 'Moved' });
      expect(refused.status).toBe(409);
      expect(refused.text).toContain('another organisation');
      expect(await userJoined(a.organisationId)).toEqual([]);
      expect((await account(email))!.organisationId).toBe(b.organisationId);
      expect((await call(a, 'get', '/v1/invitations')).body.data.map((i: { id: string }) => i.id)).toEqual([res.body.data.id]);
    });

    it('a failure after user.joined was written rolls the outbox row back with the rest', async () => {
      const t = await tenant();
      const { email, invitation, token } = await invite(t);
      const fn = `fail_accept_${rand()}`;
      await db.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.id = ${Number(invitation.id)} AND NEW.status = 'accepted' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`);
      await db.query(`CREATE TRIGGER ${fn} BEFORE UPDATE ON invitations FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
      try {
        const failed = await submit({ token });
        expect(failed.status).toBe(500);
        expect(failed.text).toContain('Something went wrong');
      } finally {
        await db.query(`DROP TRIGGER ${fn} ON invitations; DROP FUNCTION ${fn}()`);
      }
      expect(await userJoined(t.organisationId)).toEqual([]);
      expect(await account(email)).toBeNull();
      expect((await db.getRepository(InvitationEntity).findOneByOrFail({ id: invitation.id })).status).toBe('pending');

      expect((await submit({ token })).status).toBe(200);
      expect(await userJoined(t.organisationId)).toEqual([{ user_id: (await account(email))!.id }]);
    });

    it('accepting by id (the operator CLI) works too; invitations not made through the API emit no user.joined', async () => {
      const t = await tenant();
      const viaApi = await invite(t);
      const invitations = api.app.get(InvitationsService, { strict: false });
      const accepted = await invitations.accept({ id: viaApi.invitation.id });
      expect(accepted).toMatchObject({ joined: true, person: { email: viaApi.email, organisationId: t.organisationId } });
      expect(await userJoined(t.organisationId)).toEqual([{ user_id: accepted.person.id }]);

      const consoleEmail = `console-${rand()}@elsewhere.example`;
      const made = await api.app.get(PeopleAdder, { strict: false }).add(t.organisationId, { email: consoleEmail }, 'console', null);
      expect(made.outcome).toBe('invited');
      await invitations.accept({ id: (made as { invitation: InvitationEntity }).invitation.id });
      expect((await account(consoleEmail))!.organisationId).toBe(t.organisationId);
      expect(await userJoined(t.organisationId)).toHaveLength(1);
      await expect(invitations.accept({ id: viaApi.invitation.id })).rejects.toThrow('already been accepted');
    });
  });

  describe('invitations', () => {
    it("GET lists pending ones newest first with pagination; DELETE withdraws (204), then 404; another organisation's is 404", async () => {
      const [t, other] = [await tenant(), await tenant()];
      const made = [];
      for (let i = 0; i < 3; i++) made.push((await invite(t)).invitation);
      const theirs = (await invite(other)).invitation;
      const first = await call(t, 'get', '/v1/invitations?limit=2');
      checker.check('GET', '/v1/invitations', 200, first.body);
      expect(first.body.data.map((i: { id: string }) => i.id)).toEqual([made[2].id, made[1].id]);
      const second = await call(t, 'get', `/v1/invitations?limit=2&cursor=${first.body.next_cursor}`);
      expect(second.body).toEqual({ data: [made[0]], next_cursor: null });

      const gone = await call(t, 'delete', `/v1/invitations/${made[1].id}`);
      expect(gone.status).toBe(204);
      expect(gone.text).toBe('');
      expectError(await call(t, 'delete', `/v1/invitations/${made[1].id}`), 404, 'not_found', 'DELETE', '/v1/invitations/{id}');
      expectError(await call(t, 'delete', `/v1/invitations/${theirs.id}`), 404, 'not_found', 'DELETE', '/v1/invitations/{id}');
      expectError(await call(t, 'delete', '/v1/invitations/abc'), 404, 'not_found', 'DELETE', '/v1/invitations/{id}');
      expect((await db.getRepository(InvitationEntity).findOneByOrFail({ id: theirs.id })).status).toBe('pending');
      expect((await call(t, 'get', '/v1/invitations')).body.data.map((i: { id: string }) => i.id)).toEqual([made[2].id, made[0].id]);
    });
  });

  describe('people', () => {
    it('GET /v1/users lists members newest first by joined_at, paged, and nobody else', async () => {
      const [t, other] = [await tenant(), await tenant()];
      const base = Date.now() - 3_600_000;
      const seeded = [];
      for (const minutes of [10, 50, 30, 20, 40]) seeded.push(await seedPerson(t.organisationId, { joinedAt: new Date(base + minutes * 60_000) }));
      await seedPerson(other.organisationId);
      await seedPerson(null);
      const expected = [...seeded].sort((x, y) => y.joinedAt!.getTime() - x.joinedAt!.getTime()).map((p) => p.id);
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call(t, 'get', `/v1/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        checker.check('GET', '/v1/users', 200, res.body);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        ids.push(...res.body.data.map((p: { id: string }) => p.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(ids).toEqual(expected);
      expectError(await call(t, 'get', '/v1/users?limit=0'), 400, 'invalid_request', 'GET', '/v1/users');
    });

    it("another organisation's person, a removed one and a non-digit id answer 404 on GET, PATCH and DELETE", async () => {
      const [t, other] = [await tenant(), await tenant()];
      const theirs = await seedPerson(other.organisationId);
      const removed = await seedPerson(null);
      for (const id of [theirs.id, removed.id, 'abc', '99999999999']) {
        expectError(await call(t, 'get', `/v1/users/${id}`), 404, 'not_found', 'GET', '/v1/users/{id}');
        expectError(await call(t, 'patch', `/v1/users/${id}`, { name: 'Taken' }), 404, 'not_found', 'PATCH', '/v1/users/{id}');
        expectError(await call(t, 'delete', `/v1/users/${id}`), 404, 'not_found', 'DELETE', '/v1/users/{id}');
      }
      expect(await db.getRepository(PersonEntity).findOneByOrFail({ id: theirs.id })).toMatchObject({ organisationId: other.organisationId, name: 'Seeded' });
    });

    it('PATCH changes name, job title (null clears), group (null: none) and disabled; fields not sent are kept', async () => {
      const t = await tenant();
      const g = await seedGroup(t.organisationId, ['documents.send']);
      const p = await seedPerson(t.organisationId, { jobTitle: 'Nurse' });
      const res = await call(t, 'patch', `/v1/users/${p.id}`, { name: 'Renamed', group_id: g.id, disabled: true });
      expect(res.status).toBe(200);
      checker.check('PATCH', '/v1/users/{id}', 200, res.body);
      expect(res.body.data).toMatchObject({ id: p.id, name: 'Renamed', job_title: 'Nurse', group_id: g.id, disabled: true });
      const cleared = await call(t, 'patch', `/v1/users/${p.id}`, { job_title: null, group_id: null, disabled: false });
      expect(cleared.body.data).toMatchObject({ name: 'Renamed', job_title: null, group_id: null, disabled: false });
      expect((await call(t, 'get', `/v1/users/${p.id}`)).body).toEqual(cleared.body);
    });

    it('PATCH refuses unknown fields and bad groups (422) and a group holding organisation.own (403), changing nothing', async () => {
      const [t, other] = [await tenant(), await tenant()];
      const p = await seedPerson(t.organisationId);
      const foreign = await seedGroup(other.organisationId);
      const owners = await seedGroup(t.organisationId, ['organisation.own']);
      const cases: Array<[unknown, string]> = [
        [{ role: 'owner' }, 'role: is not a known field'],
        [{ group_id: '999999999' }, 'group_id: no such group'],
        [{ group_id: foreign.id }, 'group_id: no such group'],
        [{ group_id: 7 }, 'group_id:'],
        [{ disabled: 'yes' }, 'disabled:'],
        [{ disabled: null }, 'disabled:'],
        [{ name: '' }, 'name:'],
        [{ job_title: 'x'.repeat(201) }, 'job_title:'],
      ];
      for (const [body, message] of cases) {
        const res = await call(t, 'patch', `/v1/users/${p.id}`, body);
        expectError(res, 422, 'validation_failed', 'PATCH', '/v1/users/{id}');
        expect(res.body.error.message).toContain(message);
      }
      expectError(
        await call(t, 'patch', `/v1/users/${p.id}`, { group_id: owners.id, name: 'Boss' }),
        403,
        'permission_not_grantable',
        'PATCH',
        '/v1/users/{id}',
      );
      expect(await db.getRepository(PersonEntity).findOneByOrFail({ id: p.id })).toMatchObject({ groupId: null, name: 'Seeded' });
    });

    describe('last_people_manager', () => {
      const setup = async () => {
        const t = await tenant();
        const managers = await seedGroup(t.organisationId, ['people.manage']);
        const staff = await seedGroup(t.organisationId, ['conversations.start']);
        const manager = await seedPerson(t.organisationId, { groupId: managers.id });
        return { t, managers, staff, manager };
      };

      it('refuses disabling, demoting or removing the last manager (409) and changes nothing', async () => {
        const { t, staff, manager, managers } = await setup();
        const path = `/v1/users/${manager.id}`;
        expectError(await call(t, 'patch', path, { disabled: true }), 409, 'last_people_manager', 'PATCH', '/v1/users/{id}');
        expectError(await call(t, 'patch', path, { group_id: staff.id, name: 'Demoted' }), 409, 'last_people_manager', 'PATCH', '/v1/users/{id}');
        expectError(await call(t, 'patch', path, { group_id: null }), 409, 'last_people_manager', 'PATCH', '/v1/users/{id}');
        expectError(await call(t, 'delete', path), 409, 'last_people_manager', 'DELETE', '/v1/users/{id}');
        expect(await db.getRepository(PersonEntity).findOneByOrFail({ id: manager.id })).toMatchObject({
          organisationId: t.organisationId,
          groupId: managers.id,
          disabled: false,
          name: 'Seeded',
        });
        // With a second manager each change is allowed.
        await seedPerson(t.organisationId, { groupId: managers.id });
        expect((await call(t, 'patch', path, { group_id: staff.id })).status).toBe(200);
      });

      it('under two concurrent disables of the only two managers, one succeeds and one answers 409', async () => {
        const { t, managers, manager } = await setup();
        const second = await seedPerson(t.organisationId, { groupId: managers.id });
        const results = await Promise.all([manager, second].map((p) => call(t, 'patch', `/v1/users/${p.id}`, { disabled: true })));
        expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).toBe('last_people_manager');
        const active = await db.getRepository(PersonEntity).countBy({ organisationId: t.organisationId, groupId: managers.id, disabled: false });
        expect(active).toBe(1);
      });
    });

    it('DELETE removes the person (204) but keeps the account; adding the address again brings the same account back', async () => {
      const t = await tenant();
      await verify(t);
      const g = await seedGroup(t.organisationId);
      const p = await seedPerson(t.organisationId, { email: `back-${rand()}@${t.domain}`, groupId: g.id, name: 'Returning', jobTitle: 'Nurse' });
      const gone = await call(t, 'delete', `/v1/users/${p.id}`);
      expect(gone.status).toBe(204);
      expectError(await call(t, 'get', `/v1/users/${p.id}`), 404, 'not_found', 'GET', '/v1/users/{id}');
      expect(await db.getRepository(PersonEntity).findOneByOrFail({ id: p.id })).toMatchObject({
        email: p.email,
        name: 'Returning',
        organisationId: null,
        groupId: null,
        joinedAt: null,
      });

      const back = await call(t, 'post', '/v1/users', { email: p.email });
      expect(back.status).toBe(201);
      expect(back.body.data).toMatchObject({ id: p.id, email: p.email, name: 'Returning', job_title: 'Nurse', group_id: null });
      expect(Date.parse(back.body.data.joined_at)).toBeGreaterThan(p.joinedAt!.getTime());
    });
  });

  it('verified domains: added once per platform, listed, removed', async () => {
    const [t, other] = [await tenant(), await tenant()];
    const domains = new DomainsService(api.app.get(TransactionHost));
    expect(await domains.add(t.organisationId, `@${t.domain.toUpperCase()}`)).toBe(t.domain);
    expect(await domains.add(t.organisationId, t.domain)).toBe(t.domain);
    expect(await domains.list(t.organisationId)).toEqual([t.domain]);
    await expect(domains.add(other.organisationId, t.domain)).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(domains.add(t.organisationId, 'not a domain')).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(domains.add('99999999999', 'fine.example')).rejects.toMatchObject({ code: 'not_found' });
    await domains.remove(t.organisationId, t.domain);
    expect(await domains.list(t.organisationId)).toEqual([]);
    await expect(domains.remove(t.organisationId, t.domain)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('the OpenAPI document describes the three answers of POST /v1/users and the rule, and leaves the page out', () => {
    const op = doc.paths['/v1/users'].post;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '201', '202', '403', '409', '422']));
    expect(op.description).toContain('verified domains');
    expect(op.description).toContain('in_another_organisation');
    for (const [path, methods] of [
      ['/v1/users', ['get', 'post']],
      ['/v1/users/{id}', ['get', 'patch', 'delete']],
      ['/v1/invitations', ['get']],
      ['/v1/invitations/{id}', ['delete']],
    ] as const) {
      for (const m of methods)
        expect(doc.paths[path][m]).toMatchObject({ operationId: expect.any(String), summary: expect.any(String), description: expect.any(String) });
    }
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/invitations'))).toEqual([]);
  });
});
