import { InvitationsService } from '../invitations.service';
import { Command } from '@kernel/cli';

/** What the accept page does, for an operator (or a person who cannot open the link). */
export const INVITATION_COMMANDS: Command[] = [
  {
    words: ['invitation', 'accept'],
    usage: 'INVITATION [--name N]',
    summary: "accept an invitation on the invitee's behalf: they join the organisation",
    options: ['name'],
    arity: 1,
    async run(ctx) {
      const id = ctx.args.operand(0, 'INVITATION');
      const accepted = await (await ctx.app()).get(InvitationsService).accept({ id }, { name: ctx.args.option('name') });
      const { person, organisation, joined } = accepted;
      return {
        json: { invitation_id: accepted.invitation.id, person_id: person.id, organisation_id: organisation.id, joined },
        text: [
          joined
            ? `invitation ${accepted.invitation.id} accepted: ${person.email} (person ${person.id}) joined organisation ${organisation.id}`
            : `invitation ${accepted.invitation.id} accepted: ${person.email} (person ${person.id}) was already a member of organisation ${organisation.id}`,
        ],
      };
    },
  },
];
