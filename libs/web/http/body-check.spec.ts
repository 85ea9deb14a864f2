import { bodyProblem, MAX_BODY_ARRAY, MAX_BODY_DEPTH } from './body-check';

const nested = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

describe('bodyProblem', () => {
  it('passes ordinary bodies, including a SCIM PATCH', () => {
    expect(bodyProblem({ name: 'x', permissions: ['a', 'b'], n: 1, b: true, z: null })).toBeNull();
    expect(bodyProblem({ Operations: [{ op: 'add', path: 'members', value: [{ value: '1' }] }] })).toBeNull();
    expect(bodyProblem([])).toBeNull();
    expect(bodyProblem(nested(MAX_BODY_DEPTH))).toBeNull();
  });

  it('names the field that holds a NUL character, at any depth', () => {
    expect(bodyProblem({ name: 'a\u0000b' })).toMatchObject({ code: 'validation_failed', message: 'name: must not contain the NUL character (U+0000)' });
    expect(bodyProblem({ Operations: [{ value: { 'name.givenName': '\u0000' } }] })?.message).toMatch(/^Operations\[0\]\.value\.name\.givenName: /);
    expect(bodyProblem({ list: ['ok', 'x\u0000'] })?.message).toMatch(/^list\[1\]: /);
    expect(bodyProblem('\u0000')?.message).toMatch(/^body: /);
    expect(bodyProblem({ 'k\u0000': 1 })).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('field name') });
  });

  it('names the field that holds a lone surrogate (text that is not well-formed Unicode), at any depth; a pair passes', () => {
    expect(bodyProblem({ displayName: 'a\ud800b' })).toMatchObject({
      code: 'validation_failed',
      kind: 'value',
      message: 'displayName: must be well-formed Unicode text; it holds a lone surrogate (U+D800) at character 2',
    });
    expect(bodyProblem({ name: { givenName: '\udfff' } })?.message).toMatch(/^name\.givenName: .*U\+DFFF/);
    expect(bodyProblem({ Operations: [{ op: 'replace', path: 'title', value: 'x\udbff' }] })?.message).toMatch(/^Operations\[0\]\.value: /);
    expect(bodyProblem({ 'k\ud800': 1 })?.message).toBe(
      '"k\\ud800": a field name must be well-formed Unicode text; it holds a lone surrogate (U+D800) at character 2',
    );
    expect(bodyProblem({ name: 'a\ud83d\ude00b', reversed: 'x' })).toBeNull();
    expect(bodyProblem({ name: '\ude00\ud83d' })?.message).toMatch(/\(U\+DE00\) at character 1$/);
  });

  it('refuses an array longer than the limit, naming it', () => {
    expect(bodyProblem({ members: new Array(MAX_BODY_ARRAY).fill({ value: '1' }) })).toBeNull();
    expect(bodyProblem({ members: new Array(MAX_BODY_ARRAY + 1).fill({ value: '1' }) })).toMatchObject({
      code: 'validation_failed',
      message: `members: at most ${MAX_BODY_ARRAY} values in one request`,
    });
    expect(bodyProblem({ Operations: [{ value: { members: new Array(50_000).fill(1) } }] })?.message).toMatch(/^Operations\[0\]\.value\.members: /);
  });

  it('refuses nesting deeper than the limit without recursing further', () => {
    expect(bodyProblem(nested(MAX_BODY_DEPTH + 1))).toMatchObject({ code: 'invalid_request' });
    expect(bodyProblem(nested(100_000))).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(`${MAX_BODY_DEPTH} levels`) });
    let arr: unknown = [];
    for (let i = 0; i < 5000; i++) arr = [arr];
    expect(bodyProblem(arr)).toMatchObject({ code: 'invalid_request' });
  });

  it('refuses a field named after an object property, at any depth, naming it (422, a syntax problem)', () => {
    for (const name of [
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'prototype',
      'isPrototypeOf',
      'propertyIsEnumerable',
      'toLocaleString',
      '__lookupGetter__',
    ]) {
      expect(bodyProblem(JSON.parse(`{"name":"x","${name}":{"a":1}}`))).toEqual({
        code: 'validation_failed',
        message: `${name}: is not a known field`,
        kind: 'syntax',
      });
    }
    expect(bodyProblem(JSON.parse('{"Operations":[{"op":"add","value":{"__proto__":{"admin":true}}}]}'))?.message).toBe(
      'Operations[0].value.__proto__: is not a known field',
    );
    expect(bodyProblem(JSON.parse('{"a":{"b":[1,{"constructor":"x"}]}}'))?.message).toBe('a.b[1].constructor: is not a known field');
    // Only exact names: other spellings are ordinary (unknown or known) fields, and values are not names.
    expect(bodyProblem({ Constructor: 1, proto: 2, name: '__proto__', list: ['toString'] })).toBeNull();
  });
});
