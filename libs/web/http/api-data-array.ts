import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';

/** `{data: [Model...]}`: a whole, unpaged list (no `next_cursor`), as the contract gives facts and transcripts. */
export function ApiDataArray(model: Type<unknown>, description = 'Success.') {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: 200,
      description,
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['data'],
        properties: { data: { type: 'array', items: { $ref: getSchemaPath(model) } } },
      },
    }),
  );
}
