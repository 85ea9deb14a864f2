import { ConsoleAccessService } from './console-access.service';
import { Command } from '@kernel/cli';

export const CONSOLE_COMMANDS: Command[] = [
  {
    words: ['console', 'link'],
    usage: '--person PERSON',
    summary: 'print a one-time sign-in link to the Integrations section for a person who may use it (15 minutes, single use)',
    options: ['person'],
    arity: 0,
    async run(ctx) {
      const person = ctx.args.requireOption('person');
      const { token, expiresAt } = await (await ctx.app()).get(ConsoleAccessService).issueLink(person, 'handover');
      const url = `${ctx.config.publicBaseUrl}/console/sign-in/link?token=${token}`;
      return {
        json: { person_id: person, url, expires_at: expiresAt.toISOString() },
        text: [`sign-in link for person ${person} (works once, until ${expiresAt.toISOString()}):`, url],
      };
    },
  },
];
