import { DomainsService } from '../domains.service';
import { UsageError, Command } from '@kernel/cli';

const ACTIONS = ['add', 'remove', 'list'] as const;

/** `org domain`: the organisation's verified email domains (new addresses on them join directly). */
export const DOMAIN_COMMANDS: Command[] = [
  {
    words: ['org', 'domain'],
    usage: 'ORG add|remove DOMAIN, or ORG list',
    summary: 'verify an email domain for an organisation, remove one, or list them',
    arity: 3,
    async run(ctx) {
      const id = ctx.args.operand(0, 'ORG');
      const action = ctx.args.choice(1, ACTIONS);
      if (action === 'list' && ctx.args.operands.length > 2) {
        throw new UsageError(`unexpected argument "${ctx.args.operands[2]}" for org domain ORG list`);
      }
      const domain = action === 'list' ? '' : ctx.args.operand(2, 'DOMAIN');
      const service = (await ctx.app()).get(DomainsService);
      // The service normalises the domain (lowercase, no leading @); the answer shows its form.
      const changed = action === 'add' ? await service.add(id, domain) : domain;
      if (action === 'remove') await service.remove(id, domain);
      const domains = await service.list(id);
      const done = action === 'list' ? '' : `${changed} ${action === 'add' ? 'verified' : 'removed'}; `;
      return {
        json: { organisation_id: id, domains },
        text: [`organisation ${id}: ${done}verified domains ${domains.length ? domains.join(' ') : '(none)'}`],
      };
    },
  },
];
