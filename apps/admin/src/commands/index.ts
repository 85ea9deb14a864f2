import { CommandResult } from '../output';
import { Command } from './command';
import { CASE_COMMANDS } from './case.command';
import { CONNECTION_COMMANDS } from './connection.command';
import { CONSOLE_COMMANDS } from './console.command';
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
  ...CONSOLE_COMMANDS,
  ...GROUP_COMMANDS,
  ...PERSON_COMMANDS,
  ...INVITATION_COMMANDS,
  ...CASE_COMMANDS,
  ...CONVERSATION_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...DEMO_COMMANDS,
];

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
    'usage: npm run admin -- <command> [--json]   (<command> --help: its operands and options)',
    '',
    'commands:',
    ...rows.map(([u, s]) => `  ${u.padEnd(width)}  ${s}`),
    `  ${'help'.padEnd(width)}  this text`,
    '',
    'ORG, CONN, KEY_ID, GROUP, INVITATION, CASE and PERSON are ids; CONV is a 32-hex conversation id.',
    '--json prints exactly one JSON object on stdout.',
    'Exit codes: 0 done, 1 refused or failed (message on stderr), 2 usage error.',
  ];
}
