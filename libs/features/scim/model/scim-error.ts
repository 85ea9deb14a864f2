import { DomainError, ErrorCode } from '@kernel/core';

/** RFC 7644 §3.12 detail error keywords this service answers. */
export type ScimType = 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue';

/**
 * The contract code each keyword is answered with; its status comes from the one error table
 * (STATUS_BY_CODE, at the HTTP edge). RFC 7644 answers these keywords with 400, but the contract
 * answers a body value it refuses with 422 `validation_failed` on every SCIM write, so
 * `invalidValue` takes that code (the RFC's keyword still tells SCIM clients why).
 */
export const SCIM_CODE: Record<ScimType, ErrorCode> = {
  invalidFilter: 'invalid_request',
  tooMany: 'invalid_request',
  uniqueness: 'invalid_request',
  mutability: 'invalid_request',
  invalidSyntax: 'invalid_request',
  invalidPath: 'invalid_request',
  noTarget: 'invalid_request',
  invalidValue: 'validation_failed',
};

/**
 * A refusal in SCIM's terms: the RFC 7644 keyword and the contract code it is answered with. It
 * is a DomainError, so the one exception filter renders it (RFC 7644's error schema on SCIM
 * paths). `scimStatus` is set only where RFC 7644 names a status the code's is not: 409 for
 * `uniqueness`, which the contract's table has no code for.
 */
export class ScimError extends DomainError {
  readonly scimStatus?: number;

  constructor(
    readonly scimType: ScimType,
    message: string,
  ) {
    super(SCIM_CODE[scimType], message);
    this.name = 'ScimError';
    if (scimType === 'uniqueness') this.scimStatus = 409;
  }
}

/**
 * RFC 7644 §3.11: an endpoint the RFC defines and this service does not implement (`/Me`) answers
 * 501, with no keyword. The contract has no code for it; `not_found` (nothing is there) is the
 * nearest, and only the SCIM answer, with its own status, is ever written.
 */
export class ScimNotImplemented extends DomainError {
  readonly scimStatus = 501;
  readonly scimType = undefined;

  constructor(message: string) {
    super('not_found', message);
    this.name = 'ScimNotImplemented';
  }
}
export const invalidFilter = (detail: string) => new ScimError('invalidFilter', detail);
export const invalidSyntax = (detail: string) => new ScimError('invalidSyntax', detail);
export const invalidPath = (detail: string) => new ScimError('invalidPath', detail);
export const invalidValue = (detail: string) => new ScimError('invalidValue', detail);
export const noTarget = (detail: string) => new ScimError('noTarget', detail);
export const mutability = (detail: string) => new ScimError('mutability', detail);
export const uniqueness = (detail: string) => new ScimError('uniqueness', detail);
