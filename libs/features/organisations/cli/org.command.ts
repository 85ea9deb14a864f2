import { OrganisationsService } from '../organisations.service';
import { Command, CommandContext, ON_OFF } from '@kernel/cli';

const organisations = async (ctx: CommandContext) => (await ctx.app()).get(OrganisationsService);

/** Operator-side organisation settings; each change reaches every api replica's key cache. */
export const ORG_COMMANDS: Command[] = [
  {
    words: ['org', 'create'],
    usage: '--name NAME',
    summary: 'create an organisation (it accepts the current data policy, module on)',
    options: ['name'],
    arity: 0,
    async run(ctx) {
      const name = ctx.args.requireOption('name');
      const org = await (await organisations(ctx)).create(name);
      return { json: { id: org.id }, text: [`organisation ${org.id} created: ${org.name}`] };
    },
  },
  {
    words: ['org', 'module'],
    usage: 'ORG on|off',
    summary: 'switch the integrations module on or off',
    arity: 2,
    async run(ctx) {
      const id = ctx.args.operand(0, 'ORG');
      const on = ctx.args.choice(1, ON_OFF) === 'on';
      const org = await (await organisations(ctx)).setModule(id, on);
      return {
        json: { id: org.id, module_enabled: org.moduleEnabled },
        text: [`organisation ${org.id}: integrations module ${org.moduleEnabled ? 'on' : 'off'}`],
      };
    },
  },
  {
    words: ['org', 'policy'],
    usage: 'ORG accept|withdraw',
    summary: 'accept the current integrations data policy, or withdraw acceptance',
    arity: 2,
    async run(ctx) {
      const id = ctx.args.operand(0, 'ORG');
      const accept = ctx.args.choice(1, ['accept', 'withdraw'] as const) === 'accept';
      const org = await (await organisations(ctx)).setPolicy(id, accept);
      const version = org.acceptedPolicyVersion;
      return {
        json: { id: org.id, accepted_policy_version: version },
        text: [`organisation ${org.id}: ${version === null ? 'no data policy accepted' : `accepted data policy version ${version}`}`],
      };
    },
  },
  {
    words: ['org', 'allowlist'],
    usage: 'ORG [CIDR...]',
    summary: 'set the addresses the organisation may be reached from (none: anywhere)',
    arity: Infinity,
    async run(ctx) {
      const id = ctx.args.operand(0, 'ORG');
      // A comma never occurs in a CIDR, so "a,b" is taken as two entries.
      const cidrs = ctx.args.operands
        .slice(1)
        .flatMap((c) => c.split(','))
        .map((c) => c.trim())
        .filter(Boolean);
      const org = await (await organisations(ctx)).setAllowlist(id, cidrs);
      return {
        json: { id: org.id, ip_allowlist: org.ipAllowlist },
        text: [`organisation ${org.id}: allowlist ${org.ipAllowlist.length ? org.ipAllowlist.join(' ') : 'empty (any address)'}`],
      };
    },
  },
  {
    words: ['org', 'review'],
    usage: 'ORG on|off',
    summary: 'switch conversation review on or off',
    arity: 2,
    async run(ctx) {
      const id = ctx.args.operand(0, 'ORG');
      const on = ctx.args.choice(1, ON_OFF) === 'on';
      const org = await (await organisations(ctx)).setConversationReview(id, on);
      return {
        json: { id: org.id, conversation_review: org.conversationReview },
        text: [`organisation ${org.id}: conversation review ${org.conversationReview ? 'on' : 'off'}`],
      };
    },
  },
];
