import { ScimError } from './scim-error';
import { emailKeys, platformName, userFields } from './scim-user-model';
import { SCIM_URN } from './scim-schemas';

// The contract's status of the codes SCIM errors carry (the edge reads it from STATUS_BY_CODE; RFC 7644's 409 rides on scimStatus).
const statusOf = (err: ScimError): number => err.scimStatus ?? ({ invalid_request: 400, validation_failed: 422 } as Record<string, number>)[err.code];

describe('userFields', () => {
  it('reads a user, trimming text and turning blanks into nothing', () => {
    const f = userFields({
      userName: ' Ana.Lopez@Example.ORG ',
      name: { givenName: 'Ana', familyName: ' ' },
      title: 'Nurse',
      active: false,
      emails: [{ value: 'ana@home.example', type: 'home', primary: true }],
      [SCIM_URN.enterprise]: { employeeNumber: '42', manager: { value: '9' } },
    });
    expect(f).toMatchObject({
      userName: 'Ana.Lopez@example.org',
      givenName: 'Ana',
      familyName: null,
      title: 'Nurse',
      active: false,
      employeeNumber: '42',
      managerId: '9',
    });
    expect(f.emails).toEqual([{ value: 'ana@home.example', type: 'home', primary: true }]);
  });

  it.each([
    ['no userName', {}],
    ['a userName that is not an address', { userName: 'ana' }],
    ['an email value that is not an address', { userName: 'a@b.example', emails: [{ value: 'nope' }] }],
    ['an email without a value', { userName: 'a@b.example', emails: [{ type: 'work' }] }],
    ['a manager that is not an id', { userName: 'a@b.example', [SCIM_URN.enterprise]: { manager: { value: 'abc' } } }],
  ])("refuses %s with invalidValue (422, the contract's validation_failed)", (_, state) => {
    try {
      userFields(state);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ScimError);
      expect((err as ScimError).scimType).toBe('invalidValue');
      expect(statusOf(err as ScimError)).toBe(422);
    }
  });
});

describe('platformName', () => {
  const base = userFields({ userName: 'a@b.example' });
  it('is displayName, else name.formatted, else given and family joined, else null', () => {
    expect(platformName({ ...base, displayName: 'Ana L', formatted: 'Ana López', givenName: 'Ana' })).toBe('Ana L');
    expect(platformName({ ...base, formatted: 'Ana López', givenName: 'Ana' })).toBe('Ana López');
    expect(platformName({ ...base, givenName: 'Ana', familyName: 'López' })).toBe('Ana López');
    expect(platformName({ ...base, familyName: 'López' })).toBe('López');
    expect(platformName(base)).toBeNull();
  });
});

describe('emailKeys', () => {
  it('keys each address by itself and by type, lowercased; no emails: no keys (such a user answers no emails)', () => {
    expect(emailKeys([{ value: 'A@B.example', type: 'Work' }, { value: 'c@d.example' }])).toEqual(['*a@b.example', 'work|a@b.example', '*c@d.example']);
    expect(emailKeys(null)).toEqual([]);
  });
});
