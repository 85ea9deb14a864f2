import { ApiKeysService, KeyListing } from '../api-keys.service';
import { ConnectionsService } from '../connections.service';
import { Command, CommandContext } from '@kernel/cli';

const keys = async (ctx: CommandContext) => (await ctx.app()).get(ApiKeysService);

function table(rows: KeyListing[]): string[] {
  if (rows.length === 0) return ['no keys'];
  const lines = [
    ['ID', 'LAST FOUR', 'CREATED', 'LAST USED', 'STATE'],
    ...rows.map((k) => [k.id, k.last_four, k.created_at, k.last_used_at ?? 'never', k.state]),
  ];
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines.map((l) =>
    l
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

export const KEY_COMMANDS: Command[] = [
  {
    words: ['key', 'create'],
    usage: '--connection CONN',
    summary: 'make a key for a connection (at most two live); the key is shown this once',
    options: ['connection'],
    arity: 0,
    async run(ctx) {
      const connection = ctx.args.requireOption('connection');
      const key = await (await keys(ctx)).create(connection);
      return {
        json: { id: key.id, key: key.key },
        text: [`key ${key.id} created for connection ${connection}; it is shown only now:`, key.key],
      };
    },
  },
  {
    words: ['key', 'revoke'],
    usage: 'KEY_ID',
    summary: 'revoke a key at once (permanent)',
    arity: 1,
    async run(ctx) {
      const id = ctx.args.operand(0, 'KEY_ID');
      await (await keys(ctx)).revoke(id);
      return { json: { id, state: 'revoked' }, text: [`key ${id} revoked`] };
    },
  },
  {
    words: ['key', 'list'],
    usage: '--connection CONN',
    summary: "list a connection's keys: id, last four, created, last used, state",
    options: ['connection'],
    arity: 0,
    async run(ctx) {
      const id = ctx.args.requireOption('connection');
      const app = await ctx.app();
      // The listing alone cannot tell an unknown connection from one without keys.
      const conn = await app.get(ConnectionsService).get(id);
      const rows = await app.get(ApiKeysService).list(conn.id);
      return { json: { keys: rows }, text: table(rows) };
    },
  },
];
