import { applyDecorators } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { ID_PATTERN } from '@kernel/core';

/**
 * The id rule (ID_PATTERN of @kernel/core) as the JSON Schema pattern of every id in the OpenAPI
 * description: ids answered, id fields of request bodies and `{id}` path parameters.
 */
export const ID_SCHEMA_PATTERN = ID_PATTERN.source;

/** An `{id}` path parameter. */
export const ApiIdParam = (what: string) => ApiParam({ name: 'id', description: `Id of the ${what}.`, schema: { type: 'string', pattern: ID_SCHEMA_PATTERN } });

/** A request field that names a `what` by id: 422 `validation_failed` naming the field unless it is a string in the id form. */
export const IsIdOf = (field: string, what: string) =>
  // Registered as `@Matches(…) @IsString()` would register them (decorators apply bottom-up): the
  // pattern's message is the one a wrong value hears, a number included (see ApiValidationPipe).
  applyDecorators(IsString(), Matches(ID_PATTERN, { message: `${field} must be a ${what} id (a string of digits)` }));
