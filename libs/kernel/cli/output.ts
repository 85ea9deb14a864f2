import { DomainError } from '@kernel/core';
import { UsageError } from './args';

/** What a command answers: one JSON object for `--json`, short lines for people otherwise. */
export interface CommandResult {
  json: Record<string, unknown>;
  text: string[];
}

export const EXIT_OK = 0;
/** A refusal (DomainError) or an unexpected failure. */
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

const HINT = 'run "npm run admin -- help" for the list of commands';

/**
 * The only writer of stdout. With `--json` stdout carries exactly one JSON object, also on
 * failure (`{"error":{code,message}}`), so scripts can always parse it; the one-line
 * `error: …` message goes to stderr either way.
 */
export class Output {
  constructor(private readonly json: boolean) {}

  print(result: CommandResult): number {
    process.stdout.write(this.json ? `${JSON.stringify(result.json)}\n` : `${result.text.join('\n')}\n`);
    return EXIT_OK;
  }

  /** Reports `err` and returns the exit code it stands for. */
  fail(err: unknown): number {
    const message = oneLine(err instanceof Error ? err.message : String(err)) + redisNote(err);
    const [code, exit] =
      err instanceof UsageError ? ['usage', EXIT_USAGE] : err instanceof DomainError ? [err.code, EXIT_FAILED] : ['server_error', EXIT_FAILED];
    if (this.json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    process.stderr.write(`error: ${message}\n`);
    if (exit === EXIT_USAGE) process.stderr.write(`${HINT}\n`);
    return exit;
  }
}

/**
 * Domain services publish the cache invalidation after their transaction commits, so a Redis
 * failure surfaces after the change was saved: say so rather than let the operator retry blind.
 */
const redisNote = (err: unknown): string =>
  err instanceof Error && err.name === 'MaxRetriesPerRequestError'
    ? ' (Redis unreachable: the change may have been saved without telling the api replicas; their key caches drop stale entries within AUTH_CACHE_TTL_SECONDS)'
    : '';

const oneLine = (message: string): string => message.replace(/\s*\n\s*/g, ' ').trim() || 'unknown error';
