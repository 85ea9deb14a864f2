import { NO_NUL, NOT_BLANK } from '@web/http';
import { commonErrorCodes, commonErrors, stateRequestLimits, toOpenApi31Nullables } from './openapi-post-process';

describe('toOpenApi31Nullables', () => {
  it('turns nullable scalars into a type list', () => {
    expect(toOpenApi31Nullables({ type: 'string', nullable: true, format: 'date-time' })).toEqual({ type: ['string', 'null'], format: 'date-time' });
  });

  it('wraps a nullable $ref in oneOf with null, keeping the description outside', () => {
    expect(toOpenApi31Nullables({ $ref: '#/components/schemas/A', nullable: true, description: 'd' })).toEqual({
      description: 'd',
      oneOf: [{ $ref: '#/components/schemas/A' }, { type: 'null' }],
    });
  });

  it("wraps a nullable allOf (swagger's form of a nullable nested DTO) so that null is accepted", () => {
    expect(toOpenApi31Nullables({ type: 'object', nullable: true, allOf: [{ $ref: '#/components/schemas/T' }] })).toEqual({
      oneOf: [{ $ref: '#/components/schemas/T' }, { type: 'null' }],
    });
  });

  it('recurses into properties and arrays, and drops nullable: false', () => {
    expect(
      toOpenApi31Nullables({
        type: 'object',
        properties: { a: { type: 'array', items: { type: 'integer', nullable: true } }, b: { type: 'string', nullable: false } },
      }),
    ).toEqual({ type: 'object', properties: { a: { type: 'array', items: { type: ['integer', 'null'] } }, b: { type: 'string' } } });
  });
});

describe('stateRequestLimits', () => {
  const doc = () => ({
    paths: {
      '/v1/things': {
        get: {
          parameters: [
            { name: 'code', in: 'path', schema: { type: 'string' } },
            { name: 'limit', in: 'query', schema: { type: 'integer' } },
          ],
        },
        post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/In' } } } } },
      },
    },
    components: {
      schemas: {
        In: {
          type: 'object',
          properties: {
            name: { type: 'string', pattern: NOT_BLANK },
            note: { type: ['string', 'null'] },
            kind: { type: 'string', enum: ['a'] },
            file: { type: 'string', format: 'binary' },
            tags: { type: 'array', items: { type: 'string' } },
            few: { type: 'array', maxItems: 5, items: { $ref: '#/components/schemas/Inner' } },
          },
        },
        Inner: { type: 'object', properties: { v: { type: 'string' } } },
        Out: { type: 'object', properties: { s: { type: 'string' }, list: { type: 'array', items: { type: 'string' } } } },
      },
    },
  });

  it('gives request strings the no-NUL pattern and request arrays maxItems 1000, keeping what they state', () => {
    const d = doc();
    stateRequestLimits(d);
    const p = d.components.schemas.In.properties as Record<string, Record<string, unknown>>;
    expect(p.name.pattern).toBe(NOT_BLANK);
    expect(p.note.pattern).toBe(NO_NUL);
    expect(p.kind.pattern).toBeUndefined();
    expect(p.file.pattern).toBeUndefined();
    expect(p.tags).toMatchObject({ maxItems: 1000, items: { type: 'string', pattern: NO_NUL } });
    expect(p.few.maxItems).toBe(5);
    expect(d.components.schemas.Inner.properties.v).toEqual({ type: 'string', pattern: NO_NUL });
    expect(d.paths['/v1/things'].get.parameters[0].schema).toEqual({ type: 'string', pattern: NO_NUL });
    expect(d.paths['/v1/things'].get.parameters[1].schema).toEqual({ type: 'integer' });
  });

  it('leaves answer schemas alone', () => {
    const d = doc();
    stateRequestLimits(d);
    expect(d.components.schemas.Out).toEqual(doc().components.schemas.Out);
  });

  it('the patterns say what they mean', () => {
    const noNul = new RegExp(NO_NUL, 'u');
    const notBlank = new RegExp(NOT_BLANK, 'u');
    expect([noNul.test('a b'), noNul.test(''), noNul.test('a\u0000')]).toEqual([true, true, false]);
    expect([notBlank.test(' x '), notBlank.test(' \t\n'), notBlank.test(''), notBlank.test('\u0000'), notBlank.test('x\u0000')]).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('commonErrors', () => {
  const common = {
    '400':
      '`invalid_request`: malformed JSON, a body not sent as application/json or not in UTF-8, bad query parameters (an empty `cursor` too), or more than one `Authorization` header.',
    '401': '`unauthorised`: no key sent, or the key is malformed or revoked (a header without the `Bearer` scheme is told the form it must have).',
    '403': '`module_off`, `scope_missing`, `ip_not_allowed`.',
    '429':
      '`rate_limited`: the connection used up its rate limit (see `Retry-After`, `RateLimit`), or too many calls from this address were refused 401 (or 400 for more than one `Authorization` header) this minute (see `Retry-After`).',
    '500': '`server_error`: an unexpected error; the message carries an error id.',
  };

  it('groups the common codes under the status the error table gives each; 404 only where the path names an object, 405 nowhere', () => {
    expect(commonErrors({ names: true, scoped: true })).toEqual({ ...common, '404': '`not_found`: no such object in this organisation.' });
    expect(commonErrors({ names: false, scoped: true })).toEqual(common);
    expect([...commonErrorCodes({ names: false, scoped: true }).values()].flat()).not.toContain('not_found');
    expect([...commonErrorCodes({ names: true, scoped: true }).values()].flat()).toContain('not_found');
  });

  it('lists scope_missing only for a call that needs a scope', () => {
    expect(commonErrors({ names: false, scoped: false })['403']).toBe('`module_off`, `ip_not_allowed`.');
    expect(commonErrorCodes({ names: false, scoped: false }).get(403)).toEqual(['module_off', 'ip_not_allowed']);
  });
});
