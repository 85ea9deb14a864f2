import { toOpenApi31Nullables } from './openapi-post-process';

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

  it('wraps a nullable allOf (swagger\'s form of a nullable nested DTO) so that null is accepted', () => {
    expect(toOpenApi31Nullables({ type: 'object', nullable: true, allOf: [{ $ref: '#/components/schemas/T' }] })).toEqual({
      oneOf: [{ allOf: [{ $ref: '#/components/schemas/T' }] }, { type: 'null' }],
    });
  });

  it('recurses into properties and arrays, and drops nullable: false', () => {
    expect(
      toOpenApi31Nullables({ type: 'object', properties: { a: { type: 'array', items: { type: 'integer', nullable: true } }, b: { type: 'string', nullable: false } } }),
    ).toEqual({ type: 'object', properties: { a: { type: 'array', items: { type: ['integer', 'null'] } }, b: { type: 'string' } } });
  });
});
