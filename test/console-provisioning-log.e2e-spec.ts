import { useApi } from './support/api';
import { ConsolePerson, makeConsolePerson, signIn, useBrowser, visitCheck } from './support/browser';
import { oktaUser, patchOp, rand, Res, scim, SCIM, scimTenant, ScimTenant } from './support/scim-client';
import { until } from './support/until';

jest.setTimeout(90_000);

const OKTA_UA = 'Okta SCIM Client 1.0.0';
const ENTRA_UA = 'Azure AD SCIM Client';

/**
 * The provisioning log in a real Chromium, against the real api: SCIM changes and refusals made by
 * Okta- and Entra-like calls, the list newest first with its filters and pages, an event's own page
 * with what changed (attributes old → new, members added and removed), for an integrations manager
 * and an owner, never another organisation's events; at desktop width and 390 px, with axe.
 */
describe('Integrations section: the provisioning log (browser)', () => {
  const { api } = useApi({ ownAddress: true });
  const { page } = useBrowser();
  let t: ScimTenant;
  let other: ScimTenant;
  let manager: ConsolePerson;
  let owner: ConsolePerson;
  let groupId: string;
  let userIds: string[];
  const groupName = `Interpreters ${rand()}`;

  const ok = (res: Res, status = 200) => {
    expect({ status: res.status }).toEqual({ status });
    return res.body;
  };

  beforeAll(async () => {
    t = await scimTenant(api);
    other = await scimTenant(api);
    manager = await makeConsolePerson(api.app, t.organisationId, ['integrations.manage'], 'Ada Lovelace');
    owner = await makeConsolePerson(api.app, t.organisationId, ['organisation.own'], 'Grace Hopper');
    // What the identity providers did: users created (Okta), a group pushed with members, a PATCH
    // moving members (Entra), a deactivation, and refusals.
    userIds = [];
    for (let i = 0; i < 3; i++) {
      userIds.push(ok(await scim(api, t, 'post', '/Users', oktaUser(`nurse${i}.${rand()}@${t.domain}`), { 'User-Agent': OKTA_UA }), 201).id);
    }
    groupId = ok(
      await scim(api, t, 'post', '/Groups', { schemas: [SCIM.group], displayName: groupName, members: [{ value: userIds[0] }] }, { 'User-Agent': OKTA_UA }),
      201,
    ).id;
    ok(
      await scim(
        api,
        t,
        'patch',
        `/Groups/${groupId}`,
        patchOp(
          { op: 'add', path: 'members', value: [{ value: userIds[1] }, { value: userIds[2] }] },
          { op: 'remove', path: `members[value eq "${userIds[0]}"]` },
        ),
        { 'User-Agent': ENTRA_UA },
      ),
    );
    ok(
      await scim(
        api,
        t,
        'patch',
        `/Users/${userIds[0]}`,
        patchOp({ op: 'replace', value: { active: false, title: 'Senior interpreter', 'name.givenName': 'Ana' } }),
        { 'User-Agent': ENTRA_UA },
      ),
    );
    const taken = (await scim(api, t, 'get', `/Users/${userIds[1]}`)).body.userName;
    expect((await scim(api, t, 'post', '/Users', oktaUser(taken), { 'User-Agent': OKTA_UA })).status).toBe(409);
    expect((await scim(api, t, 'get', '/Groups/999999999', undefined, { 'User-Agent': ENTRA_UA })).status).toBe(404);
    // Another organisation's events, never shown here.
    ok(await scim(api, other, 'post', '/Users', oktaUser(`secret.${rand()}@${other.domain}`)), 201);
    await until(async () => {
      const res = await api.http().get('/v1/provisioning-events?outcome=refused').set(t.auth);
      return res.body.data.length === 2;
    }, 'the two refusals logged');
  }, 60_000);

  const main = async () => (await page.textContent('main')) ?? '';
  const rows = () => page.locator('main table tbody tr');

  it('lists the changes and refusals newest first, from the navigation, at desktop and 390 px', async () => {
    await signIn(page, api, manager.personId);
    await page.getByRole('link', { name: 'Provisioning log' }).click();
    await page.waitForLoadState('load');
    expect(page.url()).toBe(`${api.url}/console/scim/log`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Provisioning log');
    const texts = await rows().allTextContents();
    expect(texts).toHaveLength(8);
    expect(texts[0]).toMatch(/Read Group 999999999.*refused.*404.*No such group.*Microsoft Entra ID · Test connection/s);
    expect(texts[1]).toMatch(/Create User.*refused.*409 uniqueness.*is already a User.*Okta/s);
    expect(texts[2]).toMatch(new RegExp(`Update \\(PATCH\\) User ${userIds[0]}.*succeeded.*3 attributes changed.*Microsoft Entra ID`, 's'));
    expect(texts[3]).toMatch(/Update \(PATCH\) Group.*2 members added, 1 member removed/s);
    expect(texts[4]).toMatch(/Create Group.*1 attribute changed, 1 member added.*Okta/s);
    expect(await main()).not.toContain('secret.');
    await visitCheck(page, 'provisioning-log');
    await page.setViewportSize({ width: 390, height: 844 });
    await visitCheck(page, 'provisioning-log-390');
  });

  it('filters by outcome, resource and time, and pages older events with the filter kept', async () => {
    await signIn(page, api, owner.personId);
    await page.goto(`${api.url}/console/scim/log`);
    await page.selectOption('#filter-outcome', 'refused');
    await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('button', { name: 'Show', exact: true }).click()]);
    await page.waitForLoadState('load');
    expect(await rows().count()).toBe(2);
    expect(page.url()).toContain('outcome=refused');
    await visitCheck(page, 'provisioning-log-refused');

    await page.goto(`${api.url}/console/scim/log?resource_type=Group`);
    expect((await rows().allTextContents()).map((r) => r.match(/(Create|Update \(PATCH\)|Read) Group/)?.[0])).toEqual([
      'Read Group',
      'Update (PATCH) Group',
      'Create Group',
    ]);

    // A time range in the future holds nothing; an end before the start is refused next to the field.
    await page.goto(`${api.url}/console/scim/log?since=2099-01-01T00:00`);
    expect(await main()).toContain('No event matches these filters.');
    const refused = await page.goto(`${api.url}/console/scim/log?since=2026-01-02T00:00&until=2026-01-01T00:00`);
    expect(refused!.status()).toBe(422);
    expect(await page.locator('#until-error').textContent()).toContain('The end must be later than the start.');
    await visitCheck(page, 'provisioning-log-bad-range');

    // 25 a page: more SCIM writes make a second page, reached by "Older" with the filter kept.
    for (let i = 0; i < 24; i++) {
      ok(await scim(api, t, 'patch', `/Users/${userIds[2]}`, patchOp({ op: 'replace', path: 'title', value: `Title ${i}` }), { 'User-Agent': OKTA_UA }));
    }
    await page.goto(`${api.url}/console/scim/log?resource_type=User&outcome=succeeded`);
    expect(await rows().count()).toBe(25);
    await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('link', { name: 'Older' }).click()]);
    await page.waitForLoadState('load');
    expect(page.url()).toMatch(/resource_type=User.*outcome=succeeded.*cursor=|outcome=succeeded.*resource_type=User.*cursor=/);
    // 3 creates, 1 deactivation and 24 title changes: 28 User successes, so 3 on the second page, the creates last.
    const second = await rows().allTextContents();
    expect(second).toHaveLength(3);
    expect(second.every((r) => /Create User/.test(r) || /Update \(PATCH\) User/.test(r))).toBe(true);
    expect(second[second.length - 1]).toMatch(/Create User/);
    await page.setViewportSize({ width: 390, height: 844 });
    await visitCheck(page, 'provisioning-log-older-390');
  });

  it('shows an event with what changed: attributes old → new and members added and removed; a refusal with its SCIM error', async () => {
    await signIn(page, api, manager.personId);
    await page.goto(`${api.url}/console/scim/log?resource_type=Group`);
    await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('link', { name: /Update \(PATCH\) Group/ }).click()]);
    await page.waitForLoadState('load');
    const text = await main();
    expect(text).toContain('Microsoft Entra ID');
    expect(text).toContain(ENTRA_UA);
    expect(text).toMatch(new RegExp(`Added \\(2\\)\\s*${userIds[1]}, ${userIds[2]}`));
    expect(text).toMatch(new RegExp(`Removed \\(1\\)\\s*${userIds[0]}`));
    await visitCheck(page, 'provisioning-event-group');
    await page.setViewportSize({ width: 390, height: 844 });
    await visitCheck(page, 'provisioning-event-group-390');

    await page.setViewportSize({ width: 1280, height: 860 });
    // The other tests may have pushed this PATCH to an older page: its own page by its id.
    const log = (await api.http().get('/v1/provisioning-events?resource_type=User&limit=100').set(t.auth)).body.data as Array<{
      id: string;
      operation: string;
      resource_id: string;
    }>;
    const deactivation = log.find((e) => e.operation === 'update' && e.resource_id === userIds[0])!;
    await page.goto(`${api.url}/console/scim/log/${deactivation.id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Update (PATCH) User ${userIds[0]}: succeeded`);
    const attrs = await page
      .locator('main table tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (cell: { textContent: string | null }) => (cell.textContent ?? '').trim()).join(' ')));
    expect(attrs).toEqual(expect.arrayContaining(['active true false', 'name.givenName Test Ana', 'title — Senior interpreter']));
    await visitCheck(page, 'provisioning-event-user');

    await page.goto(`${api.url}/console/scim/log?outcome=refused&resource_type=User`);
    await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('link', { name: /Create User/ }).click()]);
    await page.waitForLoadState('load');
    const refusal = await main();
    expect(refusal).toContain('uniqueness');
    expect(refusal).toMatch(/is already a User of this organisation/);
    expect(refusal).toContain('HTTP 409');
    await visitCheck(page, 'provisioning-event-refused');
    await page.setViewportSize({ width: 390, height: 844 });
    await visitCheck(page, 'provisioning-event-refused-390');
  });

  it('never shows another organisation’s event, by its id either', async () => {
    const [theirs] = (await api.http().get('/v1/provisioning-events').set(other.auth)).body.data;
    await signIn(page, api, manager.personId);
    const res = await page.goto(`${api.url}/console/scim/log/${theirs.id}`);
    expect(res!.status()).toBe(404);
    expect(await main()).not.toContain('secret.');
    const list = await page.goto(`${api.url}/console/scim/log?connection=${other.connectionId}`);
    expect(list!.status()).toBe(200);
    expect(await rows().count()).toBe(0);
  });
});
