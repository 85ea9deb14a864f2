import { parse } from 'scim2-parse-filter';
import { ScimError } from './scim-error';
import { elementMatches, filterSeed, parseScimPath, PathTarget } from './scim-path';
import { AttrDef, ENTERPRISE_SCHEMA, findAttr, GROUP_RESOURCE, GROUP_SCHEMA, SCIM_URN, USER_RESOURCE, USER_SCHEMA } from './scim-schemas';

const ENT = SCIM_URN.enterprise;
const EMAILS = findAttr(USER_SCHEMA.attributes, 'emails') as AttrDef;
const GROUPS = findAttr(USER_SCHEMA.attributes, 'groups') as AttrDef;
const MEMBERS = findAttr(GROUP_SCHEMA.attributes, 'members') as AttrDef;

const attrTarget = (t: PathTarget) => {
  if (t.kind !== 'attr') throw new Error(`expected an attribute target, got ${t.kind}`);
  return t;
};

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ScimError);
    const e = err as ScimError;
    return { scimType: e.scimType, code: e.code, message: e.message };
  }
  throw new Error('did not throw');
};

describe('parseScimPath', () => {
  it('reads a plain core attribute, by any capitalisation, keeping the path as sent', () => {
    const t = attrTarget(parseScimPath('DISPLAYNAME', USER_RESOURCE));
    expect(t).toMatchObject({ kind: 'attr', path: 'DISPLAYNAME', container: null });
    expect(t.attr.name).toBe('displayName');
    expect(t.filter).toBeUndefined();
    expect(t.sub).toBeUndefined();
  });

  it('trims surrounding spaces but answers with the original path', () => {
    const t = attrTarget(parseScimPath('  title ', USER_RESOURCE));
    expect(t.attr.name).toBe('title');
    expect(t.path).toBe('  title ');
  });

  it('finds the common attributes (id, meta) of the core schema', () => {
    expect(attrTarget(parseScimPath('id', USER_RESOURCE)).attr.name).toBe('id');
    expect(attrTarget(parseScimPath('meta', GROUP_RESOURCE)).attr.name).toBe('meta');
  });

  it('reads a sub-attribute', () => {
    const t = attrTarget(parseScimPath('name.givenName', USER_RESOURCE));
    expect(t.attr.name).toBe('name');
    expect(t.sub?.name).toBe('givenName');
    expect(t.subIgnored).toBeUndefined();
  });

  it('reads a value filter and a sub-attribute after it', () => {
    const t = attrTarget(parseScimPath('emails[type eq "work"].value', USER_RESOURCE));
    expect(t.attr.name).toBe('emails');
    expect(t.filter).toEqual({ op: 'eq', attrPath: 'type', compValue: 'work' });
    expect(t.sub?.name).toBe('value');
  });

  it('reads a value filter with no sub-attribute', () => {
    const t = attrTarget(parseScimPath('members[value eq "12"]', GROUP_RESOURCE));
    expect(t.filter).toEqual({ op: 'eq', attrPath: 'value', compValue: '12' });
    expect(t.sub).toBeUndefined();
  });

  it('does not end the filter at a "]" or an escaped quote inside a quoted value', () => {
    expect(attrTarget(parseScimPath('emails[value eq "a]b"].type', USER_RESOURCE)).filter).toEqual({ op: 'eq', attrPath: 'value', compValue: 'a]b' });
    expect(attrTarget(parseScimPath('emails[value eq "a\\"]b"]', USER_RESOURCE)).filter).toEqual({ op: 'eq', attrPath: 'value', compValue: 'a"]b' });
  });

  it('reads a core-URN-prefixed path as the core attribute', () => {
    const t = attrTarget(parseScimPath(`${SCIM_URN.user}:userName`, USER_RESOURCE));
    expect(t.container).toBeNull();
    expect(t.attr.name).toBe('userName');
    expect(t.path).toBe(`${SCIM_URN.user}:userName`);
  });

  it('reads an extension-URN-prefixed path under the extension, in any capitalisation of the URN', () => {
    const t = attrTarget(parseScimPath(`${ENT}:department`, USER_RESOURCE));
    expect(t.container).toBe(ENT);
    expect(t.attr.name).toBe('department');
    const lower = attrTarget(parseScimPath(`${ENT.toLowerCase()}:manager.value`, USER_RESOURCE));
    expect(lower.container).toBe(ENT);
    expect(lower.attr.name).toBe('manager');
    expect(lower.sub?.name).toBe('value');
  });

  it('reads the extension URN alone as the whole extension', () => {
    expect(parseScimPath(ENT, USER_RESOURCE)).toEqual({ kind: 'extension', path: ENT, schema: ENTERPRISE_SCHEMA });
  });

  it('answers ignored for attributes and sub-attributes RFC 7643 defines and this service does not keep', () => {
    expect(parseScimPath('password', USER_RESOURCE)).toEqual({ kind: 'ignored', path: 'password' });
    expect(parseScimPath('X509Certificates', USER_RESOURCE)).toEqual({ kind: 'ignored', path: 'X509Certificates' });
    const display = attrTarget(parseScimPath('emails[type eq "work"].display', USER_RESOURCE));
    expect(display.subIgnored).toBe(true);
    expect(display.sub).toBeUndefined();
    expect(attrTarget(parseScimPath(`${ENT}:manager.displayName`, USER_RESOURCE)).subIgnored).toBe(true);
  });

  it.each([
    ['an empty path', ''],
    ['a path starting with a digit', '1title'],
    ['trailing text', 'title x'],
    ['a dot with no sub-attribute', 'name.'],
    ['an unclosed value filter', 'emails[type eq "work"'],
    ['an unclosed value filter whose "]" is quoted', 'emails[type eq "work]"'],
    ['text after the value filter', 'emails[type eq "work"]value'],
    ['an unknown attribute', 'nickname2'],
    ['an unknown sub-attribute', 'name.nickName'],
    ['a sub-attribute of a simple attribute', 'title.value'],
    ['a value filter on a single-valued attribute', 'title[value eq "x"]'],
    ['the core schema URN alone', SCIM_URN.user],
    ['a schema the resource does not have', 'urn:example:params:scim:schemas:extension:acme:2.0:User:badge'],
    ['an unknown attribute of the extension', `${ENT}:userName`],
    ['a common attribute under the extension', `${ENT}:id`],
  ])('refuses %s with 400 invalidPath', (_, path) => {
    expect(refused(() => parseScimPath(path, USER_RESOURCE))).toMatchObject({ scimType: 'invalidPath', code: 'invalid_request' });
  });

  it('refuses a User attribute or the enterprise extension on a Group', () => {
    expect(refused(() => parseScimPath('userName', GROUP_RESOURCE)).scimType).toBe('invalidPath');
    expect(refused(() => parseScimPath(`${ENT}:department`, GROUP_RESOURCE)).scimType).toBe('invalidPath');
    expect(refused(() => parseScimPath(`${SCIM_URN.group}:displayName`, USER_RESOURCE)).scimType).toBe('invalidPath');
  });

  it('refuses a malformed value filter with 400 invalidFilter, naming the path', () => {
    const r = refused(() => parseScimPath('emails[type eq].value', USER_RESOURCE));
    expect(r).toMatchObject({ scimType: 'invalidFilter', code: 'invalid_request' });
    expect(r.message).toContain('emails[type eq].value');
  });

  it('names the missing attribute in the refusal', () => {
    expect(refused(() => parseScimPath('nickname2', USER_RESOURCE)).message).toContain('"nickname2"');
    expect(refused(() => parseScimPath('name.nickName', USER_RESOURCE)).message).toContain('no sub-attribute "nickName"');
  });
});

describe('elementMatches', () => {
  const matches = (filter: string, element: unknown, attr = EMAILS) => elementMatches(parse(filter), element, attr);

  it('compares case-insensitively unless the sub-attribute is caseExact', () => {
    expect(matches('type eq "WORK"', { type: 'work' })).toBe(true);
    expect(matches('value eq "ABC"', { value: 'abc' }, MEMBERS)).toBe(false);
    expect(matches('value eq "abc"', { value: 'abc' }, MEMBERS)).toBe(true);
  });

  it('finds the element key in any capitalisation, and accepts the attribute name before the sub-attribute', () => {
    expect(matches('type eq "work"', { Type: 'work' })).toBe(true);
    expect(matches('emails.type eq "work"', { type: 'work' })).toBe(true);
  });

  it('compares booleans, taking "true"/"false" strings as booleans', () => {
    expect(matches('primary eq true', { primary: true })).toBe(true);
    expect(matches('primary eq true', { primary: 'True' })).toBe(true);
    expect(matches('primary eq true', { primary: false })).toBe(false);
    expect(matches('primary eq true', { primary: 'yes' })).toBe(false);
  });

  it('answers pr only for a present, non-empty value', () => {
    expect(matches('value pr', { value: 'a@b.example' })).toBe(true);
    expect(matches('value pr', { value: '' })).toBe(false);
    expect(matches('value pr', { value: null })).toBe(false);
    expect(matches('value pr', { type: 'work' })).toBe(false);
  });

  it('reads co, sw, ew and the orderings', () => {
    const e = { value: 'Ana@Example.org' };
    expect(matches('value co "example"', e)).toBe(true);
    expect(matches('value sw "ana@"', e)).toBe(true);
    expect(matches('value ew ".ORG"', e)).toBe(true);
    expect(matches('value ew ".com"', e)).toBe(false);
    expect(matches('value gt "a"', e)).toBe(true);
    expect(matches('value lt "a"', e)).toBe(false);
    expect(matches('value ge "ana@example.org"', e)).toBe(true);
    expect(matches('value le "ana@example.org"', e)).toBe(true);
    expect(matches('value co "x"', { type: 'work' })).toBe(false);
    expect(matches('value gt "a"', { type: 'work' })).toBe(false);
  });

  it('joins with and, or and not', () => {
    const e = { type: 'work', primary: true };
    expect(matches('type eq "work" and primary eq true', e)).toBe(true);
    expect(matches('type eq "home" and primary eq true', e)).toBe(false);
    expect(matches('type eq "home" or primary eq true', e)).toBe(true);
    expect(matches('not (type eq "home")', e)).toBe(true);
    expect(matches('not (type eq "work")', e)).toBe(false);
  });

  it('answers ne for an element lacking the sub-attribute, and eq not', () => {
    expect(matches('type ne "work"', { value: 'x' })).toBe(true);
    expect(matches('type eq "work"', { value: 'x' })).toBe(false);
  });

  it('never matches something that is not an object', () => {
    expect(matches('type eq "work"', 'work')).toBe(false);
    expect(matches('type eq "work"', null)).toBe(false);
  });
});

describe('filterSeed', () => {
  const seed = (filter: string, attr = EMAILS) => filterSeed(parse(filter), attr);

  it('makes the element an eq filter describes, with the canonical sub-attribute names', () => {
    expect(seed('type eq "work"')).toEqual({ type: 'work' });
    expect(seed('TYPE eq "work" and primary eq "true"')).toEqual({ type: 'work', primary: true });
  });

  it('answers null for anything but eq joined by and', () => {
    expect(seed('type ne "work"')).toBeNull();
    expect(seed('type eq "work" or type eq "home"')).toBeNull();
    expect(seed('value pr')).toBeNull();
    expect(seed('not (type eq "work")')).toBeNull();
  });

  it('answers null for an unknown or read-only sub-attribute, or a null value', () => {
    expect(seed('label eq "work"')).toBeNull();
    expect(seed('display eq "Nurses"', GROUPS)).toBeNull();
    expect(seed('value eq null')).toBeNull();
  });
});
