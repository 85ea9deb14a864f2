import { OrganisationsService } from '../organisations.service';
import { Command } from '@kernel/cli';

export const POLICY_COMMANDS: Command[] = [
  {
    words: ['policy', 'publish'],
    usage: '',
    summary: 'publish a new integrations data policy version (every organisation must accept it again)',
    arity: 0,
    async run(ctx) {
      const version = await (await ctx.app()).get(OrganisationsService).publishPolicyVersion();
      return {
        json: { version },
        text: [`integrations data policy version ${version} published; organisations answer module_off until they accept it`],
      };
    },
  },
];
