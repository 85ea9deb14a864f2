import { UsageError } from '../args';
import { CommandResult } from '../output';
import { Command } from './command';
import { CASE_COMMANDS } from './case.command';
import { CONNECTION_COMMANDS } from './connection.command';
import { CONVERSATION_COMMANDS } from './conversation.command';
import { DEMO_COMMANDS } from './demo.command';
import { DOMAIN_COMMANDS } from './domain.command';
import { GROUP_COMMANDS } from './group.command';
import { INVITATION_COMMANDS } from './invitation.command';
import { KEY_COMMANDS } from './key.command';
import { MIGRATE_COMMANDS } from './migrate.command';
import { ORG_COMMANDS } from './org.command';
import { PERSON_COMMANDS } from './person.command';
import { POLICY_COMMANDS } from './policy.command';
import { WEBHOOK_COMMANDS } from './webhook.command';

export * from './command';

export const COMMANDS: Command[] = [
  ...MIGRATE_COMMANDS,
  ...ORG_COMMANDS,
  ...DOMAIN_COMMANDS,
  ...POLICY_COMMANDS,
  ...CONNECTION_COMMANDS,
  ...KEY_COMMANDS,
  ...GROUP_COMMANDS,
  ...PERSON_COMMANDS,
  ...INVITATION_COMMANDS,
  ...CASE_COMMANDS,
  ...CONVERSATION_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...DEMO_COMMANDS,
];

/** The command named by the leading words, and the words left over as its operands. */
export function findCommand(words: string[]): { command: Command; operands: string[] } {
  const command = COMMANDS.find((c) => c.words.every((w, i) => words[i] === w));
  if (!command) {
    const nouns = COMMANDS.filter((c) => c.words[0] === words[0]);
    if (nouns.length) throw new UsageError(`unknown command "${words.slice(0, 2).join(' ')}"; "${words[0]}" takes ${nouns.map((c) => c.words[1]).join('|')}`);
    throw new UsageError(`unknown command "${words[0]}"`);
  }
  const operands = words.slice(command.words.length);
  if (operands.length > command.arity) throw new UsageError(`unexpected argument "${operands[command.arity]}" for ${command.words.join(' ')}`);
  return { command, operands };
}

/** Refuses options the command does not know (a typo must not be silently ignored). */
export function checkOptions(command: Command, given: Iterable<string>): void {
  const known = new Set(['json', 'help', ...(command.options ?? [])]);
  for (const name of given) {
    if (!known.has(name)) throw new UsageError(`${command.words.join(' ')} does not take --${name}`);
  }
}

/** The usage text, and for `--json` the same list as `{"commands":[{command, summary}]}`. */
export function helpResult(): CommandResult {
  return {
    json: { commands: COMMANDS.map((c) => ({ command: `${c.words.join(' ')} ${c.usage}`.trim(), summary: c.summary })) },
    text: usageLines(),
  };
}

function usageLines(): string[] {
  const rows = COMMANDS.map((c) => [`${c.words.join(' ')} ${c.usage}`.trim(), c.summary]);
  const width = Math.max(...rows.map(([u]) => u.length));
  return [
    'usage: npm run admin -- <command> [--json]',
    '',
    'commands:',
    ...rows.map(([u, s]) => `  ${u.padEnd(width)}  ${s}`),
    `  ${'help'.padEnd(width)}  this text`,
    '',
    'ORG, CONN, KEY_ID, GROUP, INVITATION and CASE are ids; CONV is a 32-hex conversation id.',
    '--json prints exactly one JSON object on stdout.',
    'Exit codes: 0 done, 1 refused or failed (message on stderr), 2 usage error.',
  ];
}
