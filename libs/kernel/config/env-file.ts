import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * The one `.env` loader of every process (api, worker, admin CLI, the TypeORM CLI's data source
 * through AppConfig, and `npm run dev`, whose plain-JS twin is scripts/dev-env.js): Node's own
 * parser (`util.parseEnv`, the one behind `node --env-file`), so quoting and comments mean what
 * they mean there. A variable already in the real environment is never replaced. Tests never read
 * it, so a developer's `.env` cannot change what a test sees. Answers the names the file supplied.
 */
export function loadEnvFile(file = '.env', nodeEnv = process.env.NODE_ENV): string[] {
  if (nodeEnv === 'test' || !existsSync(file)) return [];
  const parsed = parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  const added = Object.keys(parsed).filter((name) => process.env[name] === undefined);
  for (const name of added) process.env[name] = parsed[name];
  return added;
}
