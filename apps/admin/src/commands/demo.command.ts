import { INestApplicationContext } from '@nestjs/common';
import { SCOPES } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { GroupEntity } from '@features/groups';
import { OrganisationsService } from '@features/organisations';
import { EntityManager } from 'typeorm';
import { Command } from '@kernel/cli';
import { DEMO_CASES, DEMO_CONSOLE_PERSON, DEMO_CONVERSATIONS, DEMO_GROUPS, DEMO_PEOPLE, DemoGroupKey } from './demo-data';
import { createGroup } from '@features/groups/cli';
import { addMember } from '@features/people/cli';

interface Seeded {
  organisation_id: string;
  groups: number;
  people: number;
  cases: number;
  conversations: number;
  /** The demo's integrations manager (null when the organisation was seeded before there was one). */
  console_person_id: string | null;
}

/**
 * Fills an organisation with demo-data.ts, in one transaction (a failure leaves nothing half
 * made). An organisation that already has cases is left as it is, so `npm run dev` can run it
 * on every start; the organisation's row lock makes two concurrent seeds run one after the other.
 * Counts are of what this run added. Addresses are `<name>@org<ORG>.example.org`, since an
 * address has one account platform-wide.
 */
async function seed(app: INestApplicationContext, organisationId: string): Promise<Seeded> {
  const seeded: Seeded = { organisation_id: organisationId, groups: 0, people: 0, cases: 0, conversations: 0, console_person_id: null };
  return app.get(TransactionHost).run(async (m) => {
    await app.get(OrganisationsService).get(organisationId);
    await m.query(`SELECT id FROM organisations WHERE id = $1 FOR UPDATE`, [organisationId]);
    const [{ n }] = await m.query(`SELECT count(*)::int AS n FROM cases WHERE organisation_id = $1`, [organisationId]);
    if (n > 0) return { ...seeded, console_person_id: await consolePerson(m, organisationId) };
    await app.get(OrganisationsService).setConversationReview(organisationId, true);

    const groups = new Map<DemoGroupKey, string>();
    for (const g of DEMO_GROUPS) {
      const existing = await groupNamed(m, organisationId, g.name);
      groups.set(g.key, existing?.id ?? (await createGroup(app, organisationId, g.name, g.permissions)).id);
      if (!existing) seeded.groups++;
    }
    for (const p of DEMO_PEOPLE) {
      const email = `${p.local}@org${organisationId}.example.org`;
      const { joined } = await addMember(app, organisationId, { email, name: p.name, jobTitle: p.jobTitle, groupId: groups.get(p.group) });
      if (joined) seeded.people++;
    }
    const cases = new Map<string, string>();
    for (const c of DEMO_CASES) {
      const opened = await app.get(CasesService).open(organisationId, { externalRef: c.ref, title: c.title, groupId: groups.get('caseWorkers') });
      cases.set(c.ref, opened.case.id);
      if (opened.created) seeded.cases++;
    }
    const ingest = app.get(ConversationIngestService);
    for (const c of DEMO_CONVERSATIONS) {
      const conversation = await ingest.start(cases.get(c.caseRef) as string, ...c.languages);
      for (const turn of c.turns) await ingest.appendTurn(conversation.id, turn);
      for (const [label, value] of c.facts) await ingest.recordFact(conversation.id, label, value);
      if (c.ended) await ingest.end(conversation.id);
      if (c.summary) await ingest.writeSummary(conversation.id, c.summary);
      seeded.conversations++;
    }
    for (const c of DEMO_CASES.filter((d) => d.closed)) await app.get(CasesService).close(cases.get(c.ref) as string);
    return { ...seeded, console_person_id: await consolePerson(m, organisationId) };
  });
}

const consolePerson = async (m: EntityManager, organisationId: string): Promise<string | null> => {
  const rows: Array<{ id: string }> = await m.query(`SELECT id FROM people WHERE organisation_id = $1 AND email = $2`, [
    organisationId,
    `${DEMO_CONSOLE_PERSON}@org${organisationId}.example.org`,
  ]);
  return rows[0] ? String(rows[0].id) : null;
};

const groupNamed = (m: EntityManager, organisationId: string, name: string): Promise<GroupEntity | null> =>
  m
    .getRepository(GroupEntity)
    .createQueryBuilder('g')
    .where('g.organisation_id = :organisationId AND lower(g.name) = lower(:name)', { organisationId, name })
    .getOne();

export const DEMO_COMMANDS: Command[] = [
  {
    words: ['demo', 'setup'],
    usage: '[--name NAME]',
    summary: 'create an organisation, a connection with every scope and a key, to try the api',
    options: ['name'],
    arity: 0,
    async run(ctx) {
      const name = ctx.args.option('name') ?? 'Demo organisation';
      const app = await ctx.app();
      // One transaction: a failure half-way leaves no organisation without its connection or key.
      const made = await app.get(TransactionHost).run(async () => {
        const org = await app.get(OrganisationsService).create(name);
        const conn = await app.get(ConnectionsService).create(org.id, 'Demo connection', [...SCOPES]);
        const key = await app.get(ApiKeysService).create(conn.id);
        return { organisation_id: org.id, connection_id: conn.id, key_id: key.id, key: key.key };
      });
      return {
        json: made,
        text: [
          `organisation ${made.organisation_id}: ${name.trim()}`,
          `connection ${made.connection_id}: Demo connection (all scopes)`,
          `key ${made.key_id} (shown only now):`,
          made.key,
        ],
      };
    },
  },
  {
    words: ['demo', 'seed'],
    usage: '--org ORG',
    summary: 'fill an organisation with demo people, groups, cases and conversations (skipped once it has cases)',
    options: ['org'],
    arity: 0,
    async run(ctx) {
      const made = await seed(await ctx.app(), ctx.args.requireOption('org'));
      const added = made.groups + made.people + made.cases + made.conversations > 0;
      const manager = made.console_person_id ? [`integrations manager (console): person ${made.console_person_id}`] : [];
      return {
        json: { ...made },
        text: added
          ? [
              `organisation ${made.organisation_id}: conversation review on; added ${made.groups} groups, ${made.people} people, ` +
                `${made.cases} cases and ${made.conversations} conversations`,
              ...manager,
            ]
          : [`organisation ${made.organisation_id} already has cases: nothing seeded`, ...manager],
      };
    },
  },
];
