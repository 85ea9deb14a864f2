import { CasesService } from '../cases.service';
import { OrganisationsService } from '@features/organisations';
import { Command, CommandContext } from '@kernel/cli';

const cases = async (ctx: CommandContext) => (await ctx.app()).get(CasesService);

/** The platform's side of cases: opened under a calling system's reference, closed by the platform. */
export const CASE_COMMANDS: Command[] = [
  {
    words: ['case', 'open'],
    usage: '--org ORG --ref REF [--title T] [--group GROUP]',
    summary: 'open a case under an external reference (the same reference again answers the existing case)',
    options: ['org', 'ref', 'title', 'group'],
    arity: 0,
    async run(ctx) {
      const org = ctx.args.requireOption('org');
      const externalRef = ctx.args.requireOption('ref');
      const app = await ctx.app();
      // The service trusts its caller's organisation (the api's principal); an operator may mistype it.
      await app.get(OrganisationsService).get(org);
      const opened = await app.get(CasesService).open(org, {
        externalRef,
        title: ctx.args.option('title'),
        groupId: ctx.args.option('group'),
      });
      const c = opened.case;
      return {
        json: { id: c.id, created: opened.created },
        text: [
          `case ${c.id} ${opened.created ? 'opened' : 'already open'} in organisation ${c.organisationId}: ${c.externalRef}${c.title ? ` (${c.title})` : ''}`,
        ],
      };
    },
  },
  {
    words: ['case', 'close'],
    usage: 'CASE',
    summary: 'close a case: no conversation can be started in it any more',
    arity: 1,
    async run(ctx) {
      const closed = await (await cases(ctx)).close(ctx.args.operand(0, 'CASE'));
      return { json: { id: closed.id, status: closed.status }, text: [`case ${closed.id}: ${closed.status}`] };
    },
  },
];
