import { DomainError, ErrorCode } from '@app/core';

/** RFC 7644 §3.12 detail error keywords this service answers. */
export type ScimType = 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue';

/**
 * Status of each keyword. RFC 7644 answers every keyword but `uniqueness` with 400; the contract
 * answers a body value it refuses with 422 `validation_failed` on every SCIM write, so
 * `invalidValue` takes the contract's 422 (the RFC's keyword still tells SCIM clients why).
 */
export const SCIM_STATUS: Record<ScimType, number> = {
  invalidFilter: 400,
  tooMany: 400,
  uniqueness: 409,
  mutability: 400,
  invalidSyntax: 400,
  invalidPath: 400,
  noTarget: 400,
  invalidValue: 422,
};

/** The contract code nearest to each status, for logs and for any renderer that ignores `status`. */
const CODE_BY_STATUS: Record<number, ErrorCode> = { 400: 'invalid_request', 409: 'invalid_request', 422: 'validation_failed' };

/**
 * A refusal in SCIM's terms: the RFC 7644 keyword and the status it is answered with. It is a
 * DomainError so everything that handles those still does; the SCIM edge renders `status` (the
 * contract's code table has no 409 for a taken name).
 */
export class ScimError extends DomainError {
  readonly status: number;

  constructor(
    readonly scimType: ScimType,
    message: string,
  ) {
    super(CODE_BY_STATUS[SCIM_STATUS[scimType]], message);
    this.name = 'ScimError';
    this.status = SCIM_STATUS[scimType];
  }
}

export const invalidFilter = (detail: string) => new ScimError('invalidFilter', detail);
export const invalidSyntax = (detail: string) => new ScimError('invalidSyntax', detail);
export const invalidPath = (detail: string) => new ScimError('invalidPath', detail);
export const invalidValue = (detail: string) => new ScimError('invalidValue', detail);
export const noTarget = (detail: string) => new ScimError('noTarget', detail);
export const mutability = (detail: string) => new ScimError('mutability', detail);
export const uniqueness = (detail: string) => new ScimError('uniqueness', detail);
