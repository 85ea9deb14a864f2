import type { OpenAPIObject } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;

/** One operation's recorded exchange: the request body sent and the answer of each status seen. */
export interface OperationExamples {
  request?: unknown;
  responses: Record<string, unknown>;
}

/** `"POST /v1/groups"`: how the recorded examples name an operation (its method and path template). */
export const operationKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;

/**
 * The examples recorded from a real api run (test/openapi-examples.e2e-spec.ts writes them with
 * RECORD_OPENAPI_EXAMPLES=1), read from beside this file in source and build alike.
 */
export function recordedExamples(): Record<string, OperationExamples> {
  return JSON.parse(readFileSync(join(__dirname, 'examples', 'recorded.json'), 'utf8')) as Record<string, OperationExamples>;
}

/**
 * An example without its `$ref` members (SCIM's URI of a group member or manager): OpenAPI tools
 * read every `$ref` member as a reference to resolve, an example's too, and fail on these.
 */
export function withoutRefMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRefMembers);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Json)
      .filter(([k]) => k !== '$ref')
      .map(([k, v]) => [k, withoutRefMembers(v)]),
  );
}

/**
 * Puts each recorded example on its operation: the request body on every JSON media type of the
 * request, each answer on its status's media type. An operation or status with nothing recorded
 * keeps no example (test/openapi-examples.e2e-spec.ts requires one on every operation).
 */
export function addExamples(doc: OpenAPIObject, examples: Record<string, OperationExamples>): void {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Json) as Array<[string, Json]>) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      const recorded = examples[operationKey(method, path)];
      if (!recorded) continue;
      const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
      if (recorded.request !== undefined) {
        for (const [type, media] of Object.entries(content)) if (/json$/.test(type)) media.example = withoutRefMembers(recorded.request);
      }
      for (const [status, body] of Object.entries(recorded.responses)) {
        const response = (op.responses as Record<string, Json>)[status];
        for (const media of Object.values((response?.content ?? {}) as Record<string, Json>)) media.example = withoutRefMembers(body);
      }
    }
  }
}
