import { ApiKeysService, ConnectionsService, OrganisationsService, SCOPES, TransactionHost } from '@app/domain';
import { Command } from './command';

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
];
