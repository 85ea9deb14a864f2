import 'reflect-metadata';
import { DomainError } from '@kernel/core';
import { ApiValidationPipe } from '@web/http';
import { UpdatePersonDto } from './update-person.dto';

// UpdatePersonDto is a PartialType of CreatePersonDto: these are the rules it must keep.
describe('UpdatePersonDto', () => {
  const pipe = new ApiValidationPipe();
  const refusal = async (body: unknown) => {
    try {
      await pipe.transform(body, { type: 'body', metatype: UpdatePersonDto });
      return null;
    } catch (err) {
      return err instanceof DomainError ? err.message : err;
    }
  };

  it('takes any subset of the fields, and null where it clears one', async () => {
    for (const body of [{}, { name: 'Ana' }, { job_title: null }, { group_id: null }, { group_id: '7' }, { disabled: true }]) {
      expect(await refusal(body)).toBeNull();
    }
  });

  it('keeps create’s rules for each field, refuses a null name and the address', async () => {
    expect(await refusal({ name: '  ' })).toBe('name: must not be blank');
    expect(await refusal({ name: null })).toBe('name: must be a string');
    expect(await refusal({ group_id: '01' })).toBe('group_id: must be a group id (a string of digits)');
    expect(await refusal({ disabled: null })).toBe('disabled: must be a boolean value');
    expect(await refusal({ email: 'a@b.example' })).toBe('email: is not a known field');
  });

  it('names the fields in their order, disabled last', async () => {
    expect(await refusal({ disabled: 1, job_title: 3 })).toBe('job_title: must be a string; disabled: must be a boolean value');
  });
});
