import { DomainError, validationFailed } from '@kernel/core';
import { fieldError, formList, formText, noticeFor } from './forms';

describe('console form helpers', () => {
  it('reads one text field and cuts it', () => {
    expect(formText({ name: 'Acme' }, 'name')).toBe('Acme');
    expect(formText({ name: ['a', 'b'] }, 'name')).toBe('');
    expect(formText(undefined, 'name')).toBe('');
    expect(formText({ name: 'x'.repeat(50) }, 'name', 10)).toHaveLength(10);
  });

  it('reads checkboxes sent once, several times or not at all', () => {
    expect(formList({ scopes: 'cases:read' }, 'scopes')).toEqual(['cases:read']);
    expect(formList({ scopes: ['cases:read', 'users:read'] }, 'scopes')).toEqual(['cases:read', 'users:read']);
    expect(formList({}, 'scopes')).toEqual([]);
  });

  it('puts a validation_failed message next to its field, in a sentence', () => {
    expect(fieldError(validationFailed('name', 'must not be empty'), { name: 'name' })).toEqual({ field: 'name', message: 'Name must not be empty.' });
    expect(fieldError(validationFailed('scopes', 'unknown scope(s): x'), { scopes: 'scopes' })).toEqual({
      field: 'scopes',
      message: 'Scopes: unknown scope(s): x.',
    });
    expect(fieldError(validationFailed('scopes', 'unknown scope(s): x'), { name: 'name' })).toBeNull();
    expect(fieldError(new DomainError('not_found', 'connection not found'), { name: 'name' })).toBeNull();
    expect(fieldError(new Error('boom'), { name: 'name' })).toBeNull();
  });

  it('shows only the fixed notices, never text from the address', () => {
    expect(noticeFor({ created: 'Made.' }, 'created')).toBe('Made.');
    expect(noticeFor({ created: 'Made.' }, '<script>')).toBeUndefined();
    expect(noticeFor({ created: 'Made.' }, 'constructor')).toBeUndefined();
  });
});
