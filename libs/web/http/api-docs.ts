import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { ErrorCode } from '@kernel/core';
import { STATUS_BY_CODE } from './error-render';

/**
 * JSON Schema patterns for rules the body check and validators enforce. `\u0000` is written as a
 * regex escape (not the character), which ajv and Python's re (Schemathesis) both read.
 * NO_NUL: no NUL character (the body check refuses it anywhere); NOT_BLANK: that, and at least one
 * character that is not white space.
 */
export const NO_NUL = '^[^\\u0000]*$';
export const NOT_BLANK = '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$';

/** `{data: Model}` (or `{data: [Model...], next_cursor}` with `list`) as the documented answer. */
export function ApiData(model: Type<unknown>, options: { status?: number; list?: boolean; description?: string } = {}) {
  const data = options.list ? { type: 'array', items: { $ref: getSchemaPath(model) } } : { $ref: getSchemaPath(model) };
  const properties: Record<string, SchemaObject | ReferenceObject> = { data } as never;
  if (options.list) properties.next_cursor = { type: 'string', nullable: true, description: 'Cursor of the next page; null on the last.' };
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success.',
      schema: { type: 'object', additionalProperties: false, required: Object.keys(properties), properties },
    }),
  );
}

/**
 * The error envelope of an answer that can carry only `codes`: the description's per-operation
 * form of `components.schemas.Error`, so that a generated client can type each call's errors.
 */
export function errorSchema(codes: readonly ErrorCode[]): SchemaObject {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        additionalProperties: false,
        required: ['code', 'message'],
        properties: { code: { type: 'string', enum: [...codes] }, message: { type: 'string' } },
      },
    },
  };
}

/** The codes an error answer's schema lists (none when it is not an errorSchema). */
export function codesOfErrorSchema(schema: unknown): ErrorCode[] {
  const code = (schema as { properties?: { error?: { properties?: { code?: { enum?: unknown } } } } } | undefined)?.properties?.error?.properties?.code;
  return Array.isArray(code?.enum) ? (code.enum as ErrorCode[]) : [];
}

/** The additional error answers of a call (the contract's "Extra errors" column). */
export function ApiErrors(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(STATUS_BY_CODE[c], [...(byStatus.get(STATUS_BY_CODE[c]) ?? []), c]);
  return applyDecorators(
    ...[...byStatus].map(([status, list]) => ApiResponse({ status, description: list.map((c) => `\`${c}\``).join(', '), schema: errorSchema(list) })),
  );
}
