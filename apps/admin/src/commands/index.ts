import { CommandResult, Command } from '@kernel/cli';
import { CASE_COMMANDS } from '@features/cases/cli';
import { CONNECTION_COMMANDS, KEY_COMMANDS } from '@features/connections/cli';
import { CONSOLE_COMMANDS } from '@web/console';
import { CONVERSATION_COMMANDS } from '@features/conversations/cli';
import { DEMO_COMMANDS } from './demo.command';
import { DOMAIN_COMMANDS, ORG_COMMANDS, POLICY_COMMANDS } from '@features/organisations/cli';
import { GROUP_COMMANDS } from '@features/groups/cli';
import { INVITATION_COMMANDS, PERSON_COMMANDS } from '@features/people/cli';
import { MIGRATE_COMMANDS } from './migrate.command';
import { WEBHOOK_COMMANDS } from '@features/webhooks/cli';

export * from '@kernel/cli';

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
