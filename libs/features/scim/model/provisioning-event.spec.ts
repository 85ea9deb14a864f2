import {
  attributeChanges,
  identityProviderOf,
  keptUserAgent,
  memberChanges,
  MEMBERS_MAX,
  scimRequestShape,
  storable,
  USER_AGENT_MAX,
  VALUE_MAX,
} from './provisioning-event';
import { SCIM_URN } from './scim-schemas';

describe('the provisioning log’s rules', () => {
  it('names the identity provider from the User-Agent', () => {
    expect(identityProviderOf('Okta SCIM Client 1.0.0')).toBe('okta');
    expect(identityProviderOf('Okta-Integration/2.0')).toBe('okta');
    expect(identityProviderOf('Azure AD SCIM Client')).toBe('entra');
    expect(identityProviderOf('Microsoft Azure Active Directory provisioning')).toBe('entra');
    expect(identityProviderOf('Microsoft Entra ID SCIM')).toBe('entra');
    expect(identityProviderOf('curl/8.5.0')).toBe('other');
    expect(identityProviderOf('Oktagon sync')).toBe('other');
    expect(identityProviderOf(undefined)).toBe('other');
    expect(identityProviderOf('')).toBe('other');
  });

  it('keeps the User-Agent without control characters, cut to its limit', () => {
    expect(keptUserAgent('  Okta\u0000 SCIM\u001b Client  ')).toBe('Okta SCIM Client');
    expect(keptUserAgent('x'.repeat(500))).toHaveLength(USER_AGENT_MAX);
    expect(keptUserAgent('x'.repeat(500))!.endsWith('…')).toBe(true);
    expect(keptUserAgent('\u0001')).toBeNull();
    expect(keptUserAgent(undefined)).toBeNull();
  });

  it('keeps only text Postgres stores: no NUL, no lone surrogate', () => {
    expect(storable('a\u0000b')).toBe('ab');
    expect(storable('x\ud800y\udc00z')).toBe('x\ufffdy\ufffdz');
    expect(storable('😀')).toBe('😀');
    expect(scimRequestShape('GET', '/scim/v2/Users/%00%F0%9F%98%80').resourceId).toBe('😀');
    expect(keptUserAgent(`${'x'.repeat(USER_AGENT_MAX - 2)}😀😀`)).toBe(`${'x'.repeat(USER_AGENT_MAX - 2)}\ufffd…`);
  });

  it('reads the operation, resource and id of a SCIM path in any letter case', () => {
    expect(scimRequestShape('POST', '/scim/v2/Users')).toEqual({ operation: 'create', resourceType: 'User', resourceId: null });
    expect(scimRequestShape('post', '/scim/v2/groups/.search?x=1')).toEqual({ operation: 'search', resourceType: 'Group', resourceId: null });
    expect(scimRequestShape('PATCH', '/SCIM/V2/Users/42')).toEqual({ operation: 'update', resourceType: 'User', resourceId: '42' });
    expect(scimRequestShape('PUT', '/scim/v2/Groups/7/')).toEqual({ operation: 'replace', resourceType: 'Group', resourceId: '7' });
    expect(scimRequestShape('DELETE', '/scim/v2/Users/%E2%9C%93')).toEqual({ operation: 'delete', resourceType: 'User', resourceId: '✓' });
    expect(scimRequestShape('GET', '/scim/v2/Schemas')).toEqual({ operation: 'read', resourceType: 'other', resourceId: null });
    expect(scimRequestShape('GET', `/scim/v2/Users/${'9'.repeat(100)}`).resourceId).toHaveLength(64);
  });

  it('lists the attributes that changed, old → new, one level down, never a password', () => {
    const before = {
      schemas: [SCIM_URN.user],
      id: '1',
      userName: 'a@x.example',
      name: { givenName: 'Ana', familyName: 'Silva' },
      active: true,
      password: 'p1',
    };
    const after = {
      schemas: [SCIM_URN.user, SCIM_URN.enterprise],
      id: '1',
      userName: 'a@x.example',
      name: { givenName: 'Anna', familyName: 'Silva' },
      active: false,
      emails: [{ value: 'a@x.example', primary: true }],
      password: 'p2',
      [SCIM_URN.enterprise]: { department: 'Care' },
    };
    expect(attributeChanges(before, after)).toEqual({
      attributes: [
        { attribute: 'active', old: true, new: false },
        { attribute: 'emails', old: null, new: [{ value: 'a@x.example', primary: true }] },
        { attribute: 'name.givenName', old: 'Ana', new: 'Anna' },
        { attribute: `${SCIM_URN.enterprise}:department`, old: null, new: 'Care' },
      ],
      attributes_total: 4,
    });
    expect(attributeChanges(before, before)).toEqual({ attributes: [], attributes_total: 0 });
    expect(attributeChanges(null, { userName: 'b@x.example' }).attributes).toEqual([{ attribute: 'userName', old: null, new: 'b@x.example' }]);
    expect(attributeChanges({ userName: 'b@x.example' }, null).attributes).toEqual([{ attribute: 'userName', old: 'b@x.example', new: null }]);
    // A null attribute and an absent one are the same state; a value and null are not.
    expect(attributeChanges({ title: null, name: { givenName: null } }, {})).toEqual({ attributes: [], attributes_total: 0 });
    expect(attributeChanges({ title: 'Nurse' }, { title: null }).attributes).toEqual([{ attribute: 'title', old: 'Nurse', new: null }]);
  });

  it('cuts a long value to its JSON’s first characters', () => {
    const [change] = attributeChanges(null, { addresses: [{ streetAddress: 'x'.repeat(1000) }] }).attributes;
    expect(typeof change.new).toBe('string');
    expect((change.new as string).length).toBe(VALUE_MAX);
    expect((change.new as string).startsWith('[{"streetAddress":"xxx')).toBe(true);
  });

  it('counts members added and removed, keeping the first ids', () => {
    expect(memberChanges(['1', '2'], ['2', '3'])).toEqual({ added: ['3'], removed: ['1'], added_total: 1, removed_total: 1 });
    const many = Array.from({ length: MEMBERS_MAX + 5 }, (_, i) => String(i));
    const c = memberChanges([], many);
    expect(c.added).toHaveLength(MEMBERS_MAX);
    expect(c.added_total).toBe(MEMBERS_MAX + 5);
  });
});
