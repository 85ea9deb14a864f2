import { DomainError, validationFailed } from '@kernel/core';

/** 409: cases keep their group (FK RESTRICT), so a group holding any cannot be deleted. */
export const groupHoldsCases = (): DomainError =>
  new DomainError('group_holds_cases', 'This group holds cases; move or close them under another group before deleting it.');

/**
 * 422 naming `name`: group names are unique in an organisation, ignoring case. A class of its
 * own so that SCIM can answer it as 409 uniqueness by its type, not by its words.
 */
export class GroupNameTakenError extends DomainError {
  constructor() {
    super('validation_failed', 'name: already used by another group in this organisation');
  }
}

export const groupNameTaken = (): DomainError => new GroupNameTakenError();

/**
 * 422 naming `code`: DELETE /v1/groups/{id}/permissions/{code} of a code the API may not change
 * (the contract lists no 403 for that call, so the refusal is a validation failure of `code`).
 */
export const codeNotRemovable = (code: string): DomainError => validationFailed('code', `${code} cannot be removed through the API`);

/** Postgres error codes the group writes translate (a race lost to a concurrent writer). */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';

export const pgCode = (err: unknown): string | undefined =>
  (err as { driverError?: { code?: string }; code?: string })?.driverError?.code ?? (err as { code?: string })?.code;
