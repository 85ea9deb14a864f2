/**
 * Ids on the wire: the decimal form of a bigint identity, as answered — digits, no sign, no
 * leading zero, at most 18 digits (always within bigint). `01` is not another spelling of `1`:
 * it names no object (404), as any other string that is not an id.
 */
export const ID_PATTERN = /^[1-9][0-9]{0,17}$/;

export const isId = (value: unknown): value is string => typeof value === 'string' && ID_PATTERN.test(value);
