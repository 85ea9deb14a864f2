import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError } from '@kernel/core';
import { isObjectPropertyName } from './body-check';

class ValidationFailure extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('validation failed');
  }
}

function describe(errors: ValidationError[], parent = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = e.property === '' || e.property === undefined ? parent : parent ? `${parent}.${e.property}` : e.property;
    const kinds = Object.keys(e.constraints ?? {});
    // A field that is absent fails every rule about its value; saying so once is the useful part.
    if (e.value === undefined && path && kinds.length && !kinds.includes('whitelistValidation') && !kinds.includes('unknownValue')) {
      out.push(`${path}: is required`);
      continue;
    }
    // One field, one message: of the rules a value breaks, the one declared first (the type rule, by
    // the DTOs' convention: `@IsString()` above `@MaxLength()`) says what is wrong with it. Decorators
    // apply bottom-up, so it is the last one class-validator reports.
    const broken = Object.entries(e.constraints ?? {});
    const [kind, text] = broken.find(([k]) => k === 'whitelistValidation' || k === 'unknownValue') ?? broken[broken.length - 1] ?? [];
    if (kind === 'whitelistValidation') out.push(`${path}: is not a known field`);
    else if (kind === 'unknownValue') out.push(`${path || 'body'}: must be a JSON object`);
    else if (text !== undefined)
      out.push(`${path}: ${text.replace(new RegExp(`^(?:(each value) in )?${e.property} `), (_, each?: string) => (each ? `${each} ` : ''))}`);
    if (e.children?.length) out.push(...describe(e.children, path));
  }
  return out;
}

/**
 * Validates once at the edge: unknown fields are refused, values transformed to the DTO. A bad
 * body answers 422 validation_failed; a bad query or path parameter answers 400 invalid_request.
 * The message names the field.
 */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  private readonly inner = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    // The value is kept (never answered) to tell an absent field from a wrong one.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new ValidationFailure(errors),
  });

  /** Custom parameters (the principal) are the guard's own objects: passed through, with no promise. */
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'custom' ? value : this.validate(value, metadata);
  }

  private async validate(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A query parameter named `constructor` or `__proto__` passes the whitelist (bodies are checked
    // at the front door, see bodyProblem); a query read into a DTO refuses it as it refuses `foo`.
    if (metadata.type === 'query' && metadata.metatype && metadata.metatype !== Object && value !== null && typeof value === 'object') {
      const name = Object.keys(value).find(isObjectPropertyName);
      if (name !== undefined) throw new DomainError('invalid_request', `${name}: is not a known field`);
    }
    try {
      return await this.inner.transform(metadata.type === 'body' && value === undefined ? {} : value, metadata);
    } catch (err) {
      if (!(err instanceof ValidationFailure)) throw err;
      const problems = [...new Set(describe(err.errors))];
      const message = problems.slice(0, 5).join('; ') || 'the request is not valid';
      throw new DomainError(metadata.type === 'body' ? 'validation_failed' : 'invalid_request', message);
    }
  }
}
