import { SCOPES } from '@kernel/core';
import { ConnectionsService } from '../connections.service';
import { CommandArgs, Command, CommandContext } from '@kernel/cli';

/** `--scopes a,b` as a list; `""` is none and `all` is every scope. Unknown names are the service's to refuse. */
export function readScopes(args: CommandArgs): string[] {
  const raw = args.requireOption('scopes').trim();
  if (raw === 'all') return [...SCOPES];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const connections = async (ctx: CommandContext) => (await ctx.app()).get(ConnectionsService);
const listed = (scopes: string[]) => (scopes.length ? scopes.join(',') : '(none)');

export const CONNECTION_COMMANDS: Command[] = [
  {
    words: ['connection', 'create'],
    usage: '--org ORG --name NAME --scopes a,b|all|""',
    summary: 'create a connection of an organisation with the given scopes',
    options: ['org', 'name', 'scopes'],
    arity: 0,
    async run(ctx) {
      const [org, name, scopes] = [ctx.args.requireOption('org'), ctx.args.requireOption('name'), readScopes(ctx.args)];
      const conn = await (await connections(ctx)).create(org, name, scopes);
      return {
        json: { id: conn.id },
        text: [`connection ${conn.id} created in organisation ${conn.organisationId}: ${conn.name}`, `scopes: ${listed(conn.scopes)}`],
      };
    },
  },
  {
    words: ['connection', 'scopes'],
    usage: 'CONN --scopes a,b|all|""',
    summary: "replace a connection's scopes (applies to its keys from the next call)",
    options: ['scopes'],
    arity: 1,
    async run(ctx) {
      const [id, scopes] = [ctx.args.operand(0, 'CONN'), readScopes(ctx.args)];
      const conn = await (await connections(ctx)).setScopes(id, scopes);
      return { json: { id: conn.id, scopes: conn.scopes }, text: [`connection ${conn.id}: scopes ${listed(conn.scopes)}`] };
    },
  },
  {
    words: ['connection', 'revoke'],
    usage: 'CONN',
    summary: 'revoke a connection: every key of it stops at once (permanent)',
    arity: 1,
    async run(ctx) {
      const id = ctx.args.operand(0, 'CONN');
      const conn = await (await connections(ctx)).revoke(id);
      const revokedAt = conn.revokedAt?.toISOString() ?? null;
      return { json: { id: conn.id, revoked_at: revokedAt }, text: [`connection ${conn.id} revoked at ${revokedAt}`] };
    },
  },
];
