/**
 * A setting the process cannot start with. Its message says which setting and why; the entry
 * points print that message alone, since a stack trace tells an operator nothing about a setting.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** What an entry point prints when it fails to start: the message of a ConfigError, else the stack. */
export function startupFailureText(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
