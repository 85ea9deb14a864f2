import { ScimError } from './scim-error';
import { parseGroupFilter, parseUserFilter } from './scim-filter';

// The contract's status of the codes SCIM errors carry (the edge reads it from STATUS_BY_CODE; RFC 7644's 409 rides on scimStatus).
const statusOf = (err: ScimError): number => err.scimStatus ?? ({ invalid_request: 400, validation_failed: 422 } as Record<string, number>)[err.code];

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ScimError);
    return { status: statusOf(err as ScimError), scimType: (err as ScimError).scimType };
  }
  throw new Error('did not throw');
};

describe('parseUserFilter', () => {
  it('reads what Okta sends before creating a user', () => {
    expect(parseUserFilter('userName eq "ana.lopez@example.org"')).toEqual([{ attr: 'userName', value: 'ana.lopez@example.org' }]);
  });

  it('reads what Entra ID matches on, in any capitalisation of names and operators', () => {
    expect(parseUserFilter('externalId eq "0f3c"')).toEqual([{ attr: 'externalId', value: '0f3c' }]);
    expect(parseUserFilter('emails[type eq "work"].value eq "a@b.example"')).toEqual([{ attr: 'email', type: 'work', value: 'a@b.example' }]);
    expect(parseUserFilter('USERNAME Eq "X@Y.example"')).toEqual([{ attr: 'userName', value: 'X@Y.example' }]);
    expect(parseUserFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a@b.example"')).toEqual([{ attr: 'userName', value: 'a@b.example' }]);
  });

  it('reads displayName, emails.value and emails[value eq …], joined by and', () => {
    expect(parseUserFilter('displayName eq "Ana" and emails.value eq "a@b.example" and externalId eq "7"')).toEqual([
      { attr: 'displayName', value: 'Ana' },
      { attr: 'email', type: null, value: 'a@b.example' },
      { attr: 'externalId', value: '7' },
    ]);
    expect(parseUserFilter('userName eq "u@x.example" and emails[type eq "work"].value eq "w@x.example"')).toEqual([
      { attr: 'userName', value: 'u@x.example' },
      { attr: 'email', type: 'work', value: 'w@x.example' },
    ]);
    expect(parseUserFilter('emails[type eq "work" and value eq "w@x.example"]')).toEqual([{ attr: 'email', type: 'work', value: 'w@x.example' }]);
    expect(parseUserFilter('emails[type eq "work" and value eq "w@x.example"] and userName eq "u@x.example"')).toHaveLength(2);
  });

  it.each([
    ['or', 'userName eq "a" or userName eq "b"'],
    ['not', 'not (userName eq "a")'],
    ['another operator', 'userName sw "a"'],
    ['presence', 'title pr'],
    ['an attribute not searchable', 'title eq "Nurse"'],
    ['a sub-attribute not searchable', 'name.givenName eq "Ana"'],
    ['a non-string value', 'userName eq true'],
    ['a value filter alone', 'emails[type eq "work"]'],
    ['a value filter on another attribute', 'groups[value eq "1"]'],
    ['bad syntax', 'userName eq'],
    ['an empty filter', ' '],
  ])('refuses %s with 400 invalidFilter', (_, text) => {
    expect(refused(() => parseUserFilter(text))).toEqual({ status: 400, scimType: 'invalidFilter' });
  });
});

describe('parseGroupFilter', () => {
  it('reads displayName and externalId', () => {
    expect(parseGroupFilter('displayName eq "Nurses" and externalId eq "abc"')).toEqual([
      { attr: 'displayName', value: 'Nurses' },
      { attr: 'externalId', value: 'abc' },
    ]);
  });

  it.each(['members[value eq "1"]', 'userName eq "a"', 'displayName co "N"'])('refuses %s', (text) => {
    expect(refused(() => parseGroupFilter(text))).toEqual({ status: 400, scimType: 'invalidFilter' });
  });
});
