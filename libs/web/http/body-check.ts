import type { RenderedError } from './error-render';

/** Deeper JSON than this is refused; the deepest body of the interface (a SCIM PATCH) needs 6. */
export const MAX_BODY_DEPTH = 32;
/**
 * Longer arrays are refused: no list of the interface needs more in one request (SCIM clients add
 * members by PATCH in batches; Okta and Entra send far fewer), and SCIM's multi-valued matching
 * is quadratic, so a 50,000-member body would hold a replica's event loop for most of a minute.
 */
export const MAX_BODY_ARRAY = 1000;

/**
 * Names every JavaScript object already answers to (`__proto__`, `constructor`, `toString`,
 * `hasOwnProperty`…) and `prototype`. No field of the interface has one, and such a field slips
 * past the DTO whitelist (which looks names up in a plain object) or, as `__proto__`, past
 * class-transformer altogether: refused like any unknown field.
 */
const OBJECT_PROPERTY_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
export const isObjectPropertyName = (name: string): boolean => OBJECT_PROPERTY_NAMES.has(name);

/**
 * A UTF-16 surrogate that is not half of a pair (the JSON escape `\ud800` alone parses to one).
 * With the `u` flag a well-formed pair is one code point and does not match.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** What is wrong with a piece of text for storage, or null: NUL, or text that is not well-formed Unicode. */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    const unit = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return `must be well-formed Unicode text; it holds a lone surrogate (U+${unit}) at character ${lone.index + 1}`;
  }
  return null;
}

/**
 * What is wrong with a parsed body that no field validation would catch, or null:
 * - nesting deeper than MAX_BODY_DEPTH (400): recursive validators would overflow the stack;
 * - an array of more than MAX_BODY_ARRAY values (422, naming the field);
 * - the NUL character (U+0000) in any string or field name (422, naming the field): Postgres
 *   cannot store it in text, and no field of the interface has a use for it;
 * - text that is not well-formed Unicode, a lone UTF-16 surrogate (JSON's `"\ud800"` escape), in
 *   any string or field name (422, naming the field): Postgres refuses it in JSON and the driver
 *   would store U+FFFD in its place, so two different values sent would become one stored value;
 * - a field named after an object property (see isObjectPropertyName), at any depth: 422 naming
 *   it, as for an unknown field (a `syntax` problem: the body does not conform to the schema).
 * The walk stops at the first problem and never recurses deeper than MAX_BODY_DEPTH + 1.
 */
export function bodyProblem(body: unknown): RenderedError | null {
  const walk = (value: unknown, path: string, depth: number): RenderedError | null => {
    if (typeof value === 'string') {
      const problem = textProblem(value);
      return problem ? { code: 'validation_failed', message: `${path || 'body'}: ${problem}`, kind: 'value' } : null;
    }
    if (value === null || typeof value !== 'object') return null;
    if (depth > MAX_BODY_DEPTH) {
      return { code: 'invalid_request', message: `The JSON body is nested more than ${MAX_BODY_DEPTH} levels deep.`, kind: 'syntax' };
    }
    if (Array.isArray(value)) {
      if (value.length > MAX_BODY_ARRAY) {
        return { code: 'validation_failed', message: `${path || 'body'}: at most ${MAX_BODY_ARRAY} values in one request`, kind: 'value' };
      }
      for (let i = 0; i < value.length; i++) {
        const found = walk(value[i], `${path}[${i}]`, depth + 1);
        if (found) return found;
      }
      return null;
    }
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key}` : key;
      const keyProblem = textProblem(key);
      if (keyProblem) {
        // JSON.stringify writes a lone surrogate as its escape, so the name is shown as it was sent.
        return { code: 'validation_failed', message: `${JSON.stringify(at)}: a field name ${keyProblem}`, kind: 'value' };
      }
      if (OBJECT_PROPERTY_NAMES.has(key)) {
        return { code: 'validation_failed', message: `${at}: is not a known field`, kind: 'syntax' };
      }
      const found = walk((value as Record<string, unknown>)[key], at, depth + 1);
      if (found) return found;
    }
    return null;
  };
  return walk(body, '', 1);
}
