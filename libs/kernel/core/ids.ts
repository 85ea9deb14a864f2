/**
 * Ids on the wire: the decimal form of a bigint identity, as answered — digits, no sign, no
 * leading zero, at most 18 digits (always within bigint). `01` is not another spelling of `1`:
 * it names no object (404), as any other string that is not an id.
 */
export const ID_PATTERN = /^[1-9][0-9]{0,17}$/;

export const isId = (value: unknown): value is string => typeof value === 'string' && ID_PATTERN.test(value);

/**
 * A uuid in its canonical text form (8-4-4-4-12 hex digits), as Postgres answers one. Anything
 * else would make Postgres refuse the query (`invalid input syntax for type uuid`), so a value
 * from a request is checked with this before it reaches a uuid column: one that is not a uuid
 * names no row.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value);
