import { DomainError } from '@kernel/core';
import { invalidFilter, invalidPath, invalidSyntax, invalidValue, mutability, noTarget, SCIM_CODE, ScimError, ScimType, uniqueness } from './scim-error';

describe('ScimError', () => {
  it.each<[ScimType, (detail: string) => ScimError, string]>([
    ['invalidFilter', invalidFilter, 'invalid_request'],
    ['invalidSyntax', invalidSyntax, 'invalid_request'],
    ['invalidPath', invalidPath, 'invalid_request'],
    ['noTarget', noTarget, 'invalid_request'],
    ['mutability', mutability, 'invalid_request'],
    ['uniqueness', uniqueness, 'invalid_request'],
    ['invalidValue', invalidValue, 'validation_failed'],
  ])('%s is a DomainError carrying its keyword, the contract code %s and the detail as message', (scimType, make, code) => {
    const err = make('the detail');
    expect(err).toBeInstanceOf(ScimError);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toBeInstanceOf(Error);
    expect(err.scimType).toBe(scimType);
    expect(err.code).toBe(code);
    expect(err.message).toBe('the detail');
    expect(err.name).toBe('ScimError');
    expect(err.headers).toEqual({});
  });

  it('answers a value the contract refuses with validation_failed (422), every other keyword with invalid_request (400)', () => {
    expect(Object.entries(SCIM_CODE).filter(([, code]) => code !== 'invalid_request')).toEqual([['invalidValue', 'validation_failed']]);
  });

  it('carries RFC 7644’s 409 only for uniqueness', () => {
    expect(uniqueness('taken').scimStatus).toBe(409);
    for (const make of [invalidFilter, invalidSyntax, invalidPath, invalidValue, noTarget, mutability]) expect(make('x').scimStatus).toBeUndefined();
    expect(new ScimError('uniqueness', 'taken').scimStatus).toBe(409);
  });
});
