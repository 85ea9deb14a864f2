import { ScimError } from './scim-error';
import { applyScimPatch, ScimJson, readOperations, readScimResource } from './scim-patch';
import { GROUP_RESOURCE, SCIM_URN, USER_RESOURCE } from './scim-schemas';

// The contract's status of the codes SCIM errors carry (the edge reads it from STATUS_BY_CODE; RFC 7644's 409 rides on scimStatus).
const statusOf = (err: ScimError): number => err.scimStatus ?? ({ invalid_request: 400, validation_failed: 422 } as Record<string, number>)[err.code];

const ENT = SCIM_URN.enterprise;
const patch = (...Operations: unknown[]) => ({ schemas: [SCIM_URN.patchOp], Operations });
const user = (): ScimJson => ({
  schemas: [SCIM_URN.user],
  id: '7',
  userName: 'ana@example.org',
  displayName: 'Ana',
  active: true,
  emails: [{ value: 'ana@example.org', type: 'work', primary: true }],
});
const group = (...members: string[]): ScimJson => ({
  schemas: [SCIM_URN.group],
  id: '3',
  displayName: 'Nurses',
  ...(members.length ? { members: members.map((value) => ({ value })) } : {}),
});
const error = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ScimError)) throw err;
    return { status: statusOf(err), scimType: err.scimType };
  }
  throw new Error('no error');
};

describe('readOperations', () => {
  it('takes op names in any capitalisation (Entra sends Add, Replace, Remove)', () => {
    expect(
      readOperations(patch({ op: 'Add', path: 'title', value: 'x' }, { op: 'REPLACE', value: {} }, { op: 'remove', path: 'title' })).map((o) => o.op),
    ).toEqual(['add', 'replace', 'remove']);
  });

  it.each([
    ['no PatchOp schema', { Operations: [{ op: 'add', value: {} }] }],
    ['no operations', { schemas: [SCIM_URN.patchOp], Operations: [] }],
    ['an unknown op', patch({ op: 'move', path: 'title' })],
    ['not an object', 'nope'],
  ])('refuses %s with 400 invalidSyntax', (_, body) => {
    expect(error(() => readOperations(body))).toEqual({ status: 400, scimType: 'invalidSyntax' });
  });
});

describe('applyScimPatch on a User', () => {
  it('Okta: deactivates and reactivates with a path-less replace of {active}', () => {
    const off = applyScimPatch(user(), patch({ op: 'replace', value: { active: false } }), USER_RESOURCE);
    expect(off.active).toBe(false);
    expect(applyScimPatch(off, patch({ op: 'replace', value: { active: true } }), USER_RESOURCE).active).toBe(true);
  });

  it('Entra: string booleans in any case', () => {
    for (const [v, want] of [
      ['True', true],
      ['False', false],
      ['false', false],
      ['TRUE', true],
    ] as const) {
      expect(applyScimPatch(user(), patch({ op: 'Replace', path: 'active', value: v }), USER_RESOURCE).active).toBe(want);
    }
    expect(error(() => applyScimPatch(user(), patch({ op: 'Replace', path: 'active', value: 'yes' }), USER_RESOURCE))).toEqual({
      status: 422,
      scimType: 'invalidValue',
    });
  });

  it('Entra: a path-less Replace whose keys are dotted and SCIM_URN-prefixed', () => {
    const out = applyScimPatch(
      user(),
      patch({
        op: 'Replace',
        value: {
          'name.givenName': 'Ana',
          'name.familyName': 'López',
          displayName: 'Ana López',
          [`${ENT}:employeeNumber`]: '1234',
          [`${ENT}:department`]: 'Care',
          active: 'False',
        },
      }),
      USER_RESOURCE,
    );
    expect(out).toMatchObject({
      name: { givenName: 'Ana', familyName: 'López' },
      displayName: 'Ana López',
      active: false,
      [ENT]: { employeeNumber: '1234', department: 'Care' },
    });
  });

  it('an extension SCIM_URN as a key whose value holds its attributes', () => {
    const out = applyScimPatch(user(), patch({ op: 'add', value: { [ENT]: { department: 'Care', costCenter: 'CC-1' } } }), USER_RESOURCE);
    expect(out[ENT]).toEqual({ department: 'Care', costCenter: 'CC-1' });
  });

  it('Entra: emails[type eq "work"].value replaces the work address, or creates it when there is none', () => {
    const replaced = applyScimPatch(user(), patch({ op: 'Replace', path: 'emails[type eq "work"].value', value: 'new@example.org' }), USER_RESOURCE);
    expect(replaced.emails).toEqual([{ value: 'new@example.org', type: 'work', primary: true }]);
    const bare = { ...user(), emails: undefined };
    const created = applyScimPatch(bare, patch({ op: 'Add', path: 'emails[type eq "work"].value', value: 'w@example.org' }), USER_RESOURCE);
    expect(created.emails).toEqual([{ type: 'work', value: 'w@example.org' }]);
    const primary = applyScimPatch(created, patch({ op: 'Replace', path: 'emails[type eq "work"].primary', value: 'True' }), USER_RESOURCE);
    expect(primary.emails).toEqual([{ type: 'work', value: 'w@example.org', primary: true }]);
  });

  it('replace through a value filter that matches nothing: noTarget when nothing can be made of it (a sub-attribute not kept)', () => {
    // RFC 7644 §3.5.2.3: emails[type eq "other"] selects no address, and display is never kept.
    const path = 'emails[type eq "other"].display';
    expect(error(() => applyScimPatch(user(), patch({ op: 'replace', path, value: 'Other' }), USER_RESOURCE))).toEqual({ status: 400, scimType: 'noTarget' });
    // Matched, it is accepted and not kept; so is an add, and Entra's null update of it.
    const other = { ...user(), emails: [...(user().emails as ScimJson[]), { value: 'o@example.org', type: 'other' }] };
    expect(applyScimPatch(other, patch({ op: 'Replace', path, value: 'Other' }), USER_RESOURCE)).toEqual(other);
    expect(applyScimPatch(user(), patch({ op: 'Add', path, value: 'Other' }), USER_RESOURCE)).toEqual(user());
    expect(applyScimPatch(user(), patch({ op: 'Replace', path, value: '' }, { op: 'Replace', path, value: null }), USER_RESOURCE)).toEqual(user());
    // In one PATCH, an element added by an earlier operation is a target (Entra's validator sends this).
    const added = applyScimPatch(
      user(),
      patch({ op: 'add', path: 'emails[type eq "other"].value', value: 'o@example.org' }, { op: 'replace', path, value: 'Other' }),
      USER_RESOURCE,
    );
    expect(added.emails).toEqual(other.emails);
  });

  it('Entra: the manager by SCIM_URN path, given as the bare id, and removed', () => {
    const set = applyScimPatch(user(), patch({ op: 'Add', path: `${ENT}:manager`, value: '12' }), USER_RESOURCE);
    expect(set[ENT]).toEqual({ manager: { value: '12' } });
    const obj = applyScimPatch(user(), patch({ op: 'Replace', path: `${ENT}:manager`, value: { value: '13', displayName: 'ignored' } }), USER_RESOURCE);
    expect(obj[ENT]).toEqual({ manager: { value: '13' } });
    expect(applyScimPatch(set, patch({ op: 'Remove', path: `${ENT}:manager` }), USER_RESOURCE)[ENT]).toBeUndefined();
  });

  it('replace of a complex attribute keeps the sub-attributes not given (RFC 7644 §3.5.2.3); null clears one', () => {
    const start = { ...user(), name: { givenName: 'Ana', familyName: 'López' } };
    expect(applyScimPatch(start, patch({ op: 'replace', path: 'name', value: { givenName: 'Anna' } }), USER_RESOURCE).name).toEqual({
      givenName: 'Anna',
      familyName: 'López',
    });
    expect(applyScimPatch(start, patch({ op: 'replace', value: { name: { familyName: null } } }), USER_RESOURCE).name).toEqual({ givenName: 'Ana' });
  });

  it('accepts and ignores RFC attributes it does not keep, in paths and values', () => {
    const out = applyScimPatch(
      user(),
      patch({ op: 'Add', path: 'x509Certificates', value: [{ value: 'MIIB' }] }, { op: 'Replace', value: { password: 'secret' } }),
      USER_RESOURCE,
    );
    expect(out).toEqual(user());
  });

  it('keeps the RFC attributes the platform has no field for, in paths and values', () => {
    const out = applyScimPatch(
      user(),
      patch({ op: 'Add', path: 'phoneNumbers[type eq "work"].value', value: '+1' }, { op: 'Replace', value: { preferredLanguage: 'en', locale: 'en-US' } }),
      USER_RESOURCE,
    );
    expect(out).toEqual({ ...user(), phoneNumbers: [{ type: 'work', value: '+1' }], preferredLanguage: 'en', locale: 'en-US' });
  });

  it('"" clears a string as null does (Entra\'s null update), but is no boolean', () => {
    const start: ScimJson = { ...user(), title: 'Nurse', name: { givenName: 'Ana' } };
    const out = applyScimPatch(
      start,
      patch(
        { op: 'Replace', path: 'emails[type eq "work"].value', value: '' },
        { op: 'Replace', path: 'title', value: '' },
        { op: 'Replace', value: { 'name.givenName': '' } },
      ),
      USER_RESOURCE,
    );
    expect(out).toEqual({ schemas: start.schemas, id: start.id, userName: start.userName, displayName: 'Ana', active: true });
    expect(error(() => applyScimPatch(start, patch({ op: 'Replace', path: 'active', value: '' }), USER_RESOURCE))).toEqual({
      status: 422,
      scimType: 'invalidValue',
    });
  });

  it('add to a multi-valued attribute appends, without duplicates; the last primary wins', () => {
    const out = applyScimPatch(
      user(),
      patch({
        op: 'add',
        path: 'emails',
        value: [
          { value: 'ANA@example.org', type: 'work' },
          { value: 'h@home.example', type: 'home', primary: true },
        ],
      }),
      USER_RESOURCE,
    );
    expect(out.emails).toEqual([
      { value: 'ANA@example.org', type: 'work', primary: false },
      { value: 'h@home.example', type: 'home', primary: true },
    ]);
  });

  it.each([
    ['remove without a path', { op: 'remove' }, 400, 'noTarget'],
    ['an unknown attribute', { op: 'replace', path: 'favouriteColour', value: 'red' }, 400, 'invalidPath'],
    ['an unknown schema', { op: 'replace', path: 'urn:example:custom:2.0:User:x', value: 'red' }, 400, 'invalidPath'],
    ['a malformed path', { op: 'replace', path: 'emails[type eq "work".value', value: 'x' }, 400, 'invalidPath'],
    ['a malformed value filter', { op: 'replace', path: 'emails[type eqq "work"].value', value: 'x' }, 400, 'invalidFilter'],
    ['a sub-attribute of a multi-valued attribute with no filter', { op: 'replace', path: 'emails.value', value: 'x@y.example' }, 400, 'invalidPath'],
    ['a read-only attribute', { op: 'replace', path: 'groups', value: [] }, 400, 'mutability'],
    ['the id', { op: 'replace', path: 'id', value: '8' }, 400, 'mutability'],
    ['another userName', { op: 'replace', path: 'userName', value: 'other@example.org' }, 400, 'mutability'],
    ['removing userName', { op: 'remove', path: 'userName' }, 400, 'mutability'],
    ['a filter no eq can satisfy', { op: 'replace', path: 'emails[value co "zzz"].type', value: 'home' }, 400, 'noTarget'],
    ['a string where a boolean goes', { op: 'replace', value: { active: 'maybe' } }, 422, 'invalidValue'],
    ['an object where a string goes', { op: 'replace', path: 'title', value: { a: 1 } }, 422, 'invalidValue'],
    ['a path-less value that is not an object', { op: 'add', value: 'x' }, 422, 'invalidValue'],
    ['a title over 200 characters', { op: 'add', path: 'title', value: 'x'.repeat(201) }, 422, 'invalidValue'],
  ])('refuses %s', (_, op, status, scimType) => {
    expect(error(() => applyScimPatch(user(), patch(op), USER_RESOURCE))).toEqual({ status, scimType });
  });

  it('accepts a userName differing only in case, and leaves the input untouched', () => {
    const start = user();
    const out = applyScimPatch(start, patch({ op: 'replace', path: 'userName', value: 'ANA@example.org' }), USER_RESOURCE);
    expect(out.userName).toBe('ANA@example.org');
    expect(start.userName).toBe('ana@example.org');
  });
});

describe('applyScimPatch on a Group', () => {
  const ids = (g: ScimJson) => ((g.members as ScimJson[] | undefined) ?? []).map((m) => m.value);

  it('Okta: rename with a path-less replace carrying {id, displayName}', () => {
    expect(applyScimPatch(group(), patch({ op: 'replace', value: { id: '3', displayName: 'Carers' } }), GROUP_RESOURCE).displayName).toBe('Carers');
    expect(error(() => applyScimPatch(group(), patch({ op: 'replace', value: { id: '4', displayName: 'Carers' } }), GROUP_RESOURCE))).toEqual({
      status: 400,
      scimType: 'mutability',
    });
  });

  it('Okta: remove with members[value eq "…"], add with members values, replace of the whole list', () => {
    expect(ids(applyScimPatch(group('1', '2'), patch({ op: 'remove', path: 'members[value eq "2"]' }), GROUP_RESOURCE))).toEqual(['1']);
    expect(
      ids(applyScimPatch(group('1'), patch({ op: 'add', path: 'members', value: [{ value: '2', display: 'B' }, { value: '1' }] }), GROUP_RESOURCE)),
    ).toEqual(['1', '2']);
    expect(ids(applyScimPatch(group('1', '2'), patch({ op: 'replace', path: 'members', value: [{ value: '3' }] }), GROUP_RESOURCE))).toEqual(['3']);
    expect(ids(applyScimPatch(group('1', '2'), patch({ op: 'replace', path: 'members', value: [] }), GROUP_RESOURCE))).toEqual([]);
  });

  it('Entra: Remove of members with a value removes only those (not the whole group)', () => {
    const out = applyScimPatch(group('1', '2', '3'), patch({ op: 'Remove', path: 'members', value: [{ value: '2' }, { value: '3' }] }), GROUP_RESOURCE);
    expect(ids(out)).toEqual(['1']);
    expect(ids(applyScimPatch(group('1', '2'), patch({ op: 'Remove', path: 'members' }), GROUP_RESOURCE))).toEqual([]);
  });

  it('Entra: Add of members with "$ref": null; removing a member not in the group changes nothing', () => {
    const out = applyScimPatch(group('1'), patch({ op: 'Add', path: 'members', value: [{ $ref: null, value: '2' }] }), GROUP_RESOURCE);
    expect(out.members).toEqual([{ value: '1' }, { value: '2' }]);
    expect(ids(applyScimPatch(group('1'), patch({ op: 'remove', path: 'members[value eq "9"]' }), GROUP_RESOURCE))).toEqual(['1']);
  });

  it("changing a member's value is refused (it is immutable)", () => {
    expect(error(() => applyScimPatch(group('1'), patch({ op: 'replace', path: 'members[value eq "1"].value', value: '2' }), GROUP_RESOURCE))).toEqual({
      status: 400,
      scimType: 'mutability',
    });
  });
});

describe('readScimResource', () => {
  it('Okta create body: password, groups and id are skipped; the rest read (locale kept)', () => {
    const out = readScimResource(
      {
        schemas: [SCIM_URN.user],
        userName: 'test.user@okta.local',
        name: { givenName: 'Test', familyName: 'User' },
        emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
        displayName: 'Test User',
        locale: 'en-US',
        externalId: '00ujl29u0le5T6Aj10h7',
        groups: [],
        password: '1mz050nq',
        active: true,
        id: '999',
        meta: { resourceType: 'User' },
      },
      USER_RESOURCE,
    );
    expect(out).toEqual({
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
    });
  });

  it('Entra group create: an extra Microsoft schema URI is fine; the core one is required', () => {
    const out = readScimResource(
      { schemas: [SCIM_URN.group, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'], displayName: 'G', members: [] },
      GROUP_RESOURCE,
    );
    expect(out).toEqual({ displayName: 'G' });
    expect(error(() => readScimResource({ displayName: 'G' }, GROUP_RESOURCE))).toEqual({ status: 400, scimType: 'invalidSyntax' });
  });
});
