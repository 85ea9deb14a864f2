import { INestApplicationContext } from '@nestjs/common';
import { DomainError, isId, validationFailed, parseEmail } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { findAccount, joinOrganisation } from '../accounts';
import { OrganisationsService } from '@features/organisations';
import { PersonEntity } from '../person.entity';
import { EntityManager } from 'typeorm';
import { Command } from '@kernel/cli';

export interface MemberInput {
  email: string;
  name?: string;
  jobTitle?: string;
  groupId?: string;
}

const optional = (field: string, value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  if (trimmed && trimmed.length > 200) throw validationFailed(field, 'must be at most 200 characters');
  return trimmed || undefined;
};

/**
 * The operator makes an address a member directly (no invitation, no email, no event): the
 * address's account, made if there is none, joins with joined_at now. Any group of the
 * organisation may be given (operator power). A member already is answered unchanged
 * (`joined` false); an account in another organisation is refused (in_another_organisation).
 * The account writes are the race-safe ones PeopleAdder and invitations use.
 */
export async function addMember(app: INestApplicationContext, organisationId: string, input: MemberInput): Promise<{ person: PersonEntity; joined: boolean }> {
  const { address } = parseEmail(input.email);
  const fields = { name: optional('name', input.name), jobTitle: optional('job_title', input.jobTitle) };
  return app.get(TransactionHost).run(async (m) => {
    await app.get(OrganisationsService).get(organisationId);
    const groupId = input.groupId ? await groupOf(m, organisationId, input.groupId) : null;
    for (let attempt = 0; attempt < 3; attempt++) {
      const account = await findAccount(m, address, true);
      if (account?.organisationId === organisationId) return { person: account, joined: false };
      if (account?.organisationId) {
        throw new DomainError('in_another_organisation', `${address} is a member of another organisation; a person can be in one organisation only.`);
      }
      const person = await joinOrganisation(m, account, address, organisationId, { ...fields, groupId });
      if (!person) continue; // a concurrent add or accept of the address won; decide again
      // A pending invitation of the address is moot now that it is a member.
      await m.query(
        `UPDATE invitations SET status = 'withdrawn', answered_at = now()
          WHERE organisation_id = $1 AND lower(email) = lower($2) AND status = 'pending'`,
        [organisationId, person.email],
      );
      return { person, joined: true };
    }
    throw new Error(`person add: adding ${address} kept losing races; giving up`);
  });
}

/** A group of the organisation, share-locked so it cannot be deleted before the person points at it. */
async function groupOf(m: EntityManager, organisationId: string, groupId: string): Promise<string> {
  const rows: Array<{ id: string }> = isId(groupId)
    ? await m.query(`SELECT id FROM groups WHERE id = $1 AND organisation_id = $2 FOR KEY SHARE`, [groupId, organisationId])
    : [];
  if (rows.length === 0) throw validationFailed('group', 'no such group in this organisation');
  return String(rows[0].id);
}

export const PERSON_COMMANDS: Command[] = [
  {
    words: ['person', 'add'],
    usage: '--org ORG --email E [--name N] [--job-title T] [--group GROUP]',
    summary: 'make an address a member directly, without an invitation (e.g. the first people manager)',
    options: ['org', 'email', 'name', 'job-title', 'group'],
    arity: 0,
    async run(ctx) {
      const org = ctx.args.requireOption('org');
      const { person, joined } = await addMember(await ctx.app(), org, {
        email: ctx.args.requireOption('email'),
        name: ctx.args.option('name'),
        jobTitle: ctx.args.option('job-title'),
        groupId: ctx.args.option('group'),
      });
      return {
        json: { id: person.id, organisation_id: org, group_id: person.groupId, joined },
        text: [
          `person ${person.id} (${person.email}) ${joined ? 'joined' : 'was already a member of'} organisation ${org}${person.groupId ? `, group ${person.groupId}` : ''}`,
        ],
      };
    },
  },
];
