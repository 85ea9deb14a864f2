/** Every error code of the contract's Errors table. */
export const ERROR_CODES = [
  'invalid_request',
  'unauthorised',
  'module_off',
  'scope_missing',
  'ip_not_allowed',
  'permission_not_grantable',
  'not_found',
  'method_not_allowed',
  'idempotency_key_in_use',
  'case_closed',
  'last_people_manager',
  'group_holds_cases',
  'in_another_organisation',
  'file_too_large',
  'text_too_long',
  'file_type_not_supported',
  'validation_failed',
  'idempotency_key_reused',
  'unknown_permission',
  'rate_limited',
  'server_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A refusal that carries a contract error code. Libraries throw it; the HTTP edge maps the
 * code to a status and the `{error:{code,message}}` envelope. The message is shown to callers.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers the edge should send (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what = 'object'): DomainError => new DomainError('not_found', `No such ${what}.`);
export const validationFailed = (field: string, problem: string): DomainError => new DomainError('validation_failed', `${field}: ${problem}`);
