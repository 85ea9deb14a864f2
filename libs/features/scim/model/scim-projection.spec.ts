import { attributeList, projectionIncludes, projectResource } from './scim-projection';
import { GROUP_RESOURCE, SCIM_URN, USER_RESOURCE } from './scim-schemas';

const user = {
  schemas: [SCIM_URN.user, SCIM_URN.enterprise],
  id: '7',
  userName: 'ana@example.org',
  name: { givenName: 'Ana', familyName: 'López', formatted: 'Ana López' },
  emails: [{ value: 'ana@example.org', type: 'work', primary: true }],
  [SCIM_URN.enterprise]: { employeeNumber: '42', department: 'Care' },
  meta: { resourceType: 'User' },
};

describe('attributeList', () => {
  it('splits on commas and repeated parameters, dropping blanks', () => {
    expect(attributeList('userName, name.givenName,,')).toEqual(['userName', 'name.givenName']);
    expect(attributeList(['a', 'b,c'])).toEqual(['a', 'b', 'c']);
    expect(attributeList(undefined)).toBeUndefined();
    expect(attributeList('')).toBeUndefined();
  });
});

describe('project', () => {
  it('attributes: schemas, id and the named ones (any case, sub-attributes, SCIM_URN-prefixed, whole extension)', () => {
    expect(projectResource(user, USER_RESOURCE, { attributes: ['USERNAME', 'name.givenName', 'emails.value'] })).toEqual({
      schemas: user.schemas,
      id: '7',
      userName: 'ana@example.org',
      name: { givenName: 'Ana' },
      emails: [{ value: 'ana@example.org' }],
    });
    expect(projectResource(user, USER_RESOURCE, { attributes: [`${SCIM_URN.enterprise}:employeeNumber`] })).toEqual({
      schemas: user.schemas,
      id: '7',
      [SCIM_URN.enterprise]: { employeeNumber: '42' },
    });
    expect(projectResource(user, USER_RESOURCE, { attributes: [SCIM_URN.enterprise] })[SCIM_URN.enterprise]).toEqual(user[SCIM_URN.enterprise]);
    expect(projectResource(user, USER_RESOURCE, { attributes: [`${SCIM_URN.user}:userName`, 'name.givenName', 'name.familyName'] }).name).toEqual({
      givenName: 'Ana',
      familyName: 'López',
    });
  });

  it('excludedAttributes: drops the named ones, never id or schemas', () => {
    const out = projectResource(user, USER_RESOURCE, {
      excludedAttributes: ['emails', 'id', 'schemas', 'name.formatted', `${SCIM_URN.enterprise}:department`, 'meta'],
    });
    expect(out).toEqual({
      schemas: user.schemas,
      id: '7',
      userName: 'ana@example.org',
      name: { givenName: 'Ana', familyName: 'López' },
      [SCIM_URN.enterprise]: { employeeNumber: '42' },
    });
    expect(user.emails).toHaveLength(1);
  });

  it('knows when members are not wanted (Entra reads groups with excludedAttributes=members)', () => {
    expect(projectionIncludes(GROUP_RESOURCE, { excludedAttributes: ['members'] }, 'members')).toBe(false);
    expect(projectionIncludes(GROUP_RESOURCE, { attributes: ['displayName'] }, 'members')).toBe(false);
    expect(projectionIncludes(GROUP_RESOURCE, { attributes: ['members.value'] }, 'members')).toBe(true);
    expect(projectionIncludes(GROUP_RESOURCE, {}, 'members')).toBe(true);
  });
});
