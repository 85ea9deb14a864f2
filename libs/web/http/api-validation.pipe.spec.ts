import 'reflect-metadata';
import { DomainError } from '@kernel/core';
import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength } from 'class-validator';
import { ApiValidationPipe } from './api-validation.pipe';
import { IsIdOf } from './id-docs';

class ListQuery {
  @IsOptional()
  @IsString()
  cursor?: string;
}

class WithId {
  @IsIdOf('case_id', 'case')
  case_id: string;
}

class Body {
  @IsString()
  @MaxLength(10)
  url: string;

  @IsArray()
  @ArrayMaxSize(2)
  @IsString({ each: true })
  @MaxLength(5, { each: true })
  events: string[];
}

describe('ApiValidationPipe', () => {
  const pipe = new ApiValidationPipe();
  const failure = async (value: unknown, type: 'query' | 'body', metatype: new () => unknown = ListQuery) => {
    try {
      await pipe.transform(value, { type, metatype });
    } catch (err) {
      return err instanceof DomainError ? { code: err.code, message: err.message } : err;
    }
    return null;
  };
  const query = (entries: Record<string, string>) => Object.assign(Object.create(null), entries) as Record<string, string>;

  it('refuses a query parameter named after an object property as it refuses an unknown one (400 naming it)', async () => {
    expect(await failure(query({ foo: '1' }), 'query')).toEqual({ code: 'invalid_request', message: 'foo: is not a known field' });
    for (const name of ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf']) {
      expect(await failure(query({ cursor: 'c', [name]: '1' }), 'query')).toEqual({ code: 'invalid_request', message: `${name}: is not a known field` });
    }
    expect(await failure(query({ cursor: 'c' }), 'query')).toBeNull();
  });

  it('leaves queries read as plain records (SCIM) to their reader', async () => {
    expect(await failure(query({ constructor: '1' }), 'query', Object)).toBeNull();
  });

  it('says a missing field is required, once, instead of every rule its value would break', async () => {
    expect(await failure({ url: 'x' }, 'body', Body)).toEqual({ code: 'validation_failed', message: 'events: is required' });
    expect(await failure({}, 'body', Body)).toEqual({ code: 'validation_failed', message: 'url: is required; events: is required' });
    expect(await failure({ url: null, events: ['toolong'] }, 'body', Body)).toEqual({
      code: 'validation_failed',
      message: 'url: must be a string; events: each value must be shorter than or equal to 5 characters',
    });
    expect(await failure({ url: 'x', events: ['a'], foo: 1 }, 'body', Body)).toEqual({ code: 'validation_failed', message: 'foo: is not a known field' });
  });

  it('says one thing about each field: the rule declared first (its type), however many the value breaks', async () => {
    const one = (message: string) => ({ code: 'validation_failed', message });
    expect(await failure({ case_id: 7 }, 'body', WithId)).toEqual(one('case_id: must be a case id (a string of digits)'));
    expect(await failure({ case_id: '07' }, 'body', WithId)).toEqual(one('case_id: must be a case id (a string of digits)'));
    expect(await failure({ url: 7, events: 'x' }, 'body', Body)).toEqual(one('url: must be a string; events: must be an array'));
    expect(await failure({ url: 'x'.repeat(11), events: [7, 'toolong'] }, 'body', Body)).toEqual(
      one('url: must be shorter than or equal to 10 characters; events: each value must be a string'),
    );
  });
});
