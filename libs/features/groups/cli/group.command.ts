import { INestApplicationContext } from '@nestjs/common';
import { validationFailed } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { GroupEntity } from '../group.entity';
import { OrganisationsService } from '@features/organisations';
import { PermissionsService } from '../permissions.service';
import { Command } from '@kernel/cli';

/**
 * A group made by the operator. Unlike `POST /v1/groups` it may hold any code of the catalogue,
 * including those a connection may not grant (integrations.manage, organisation.own): that is
 * how an organisation gets its owners. Unknown codes still answer unknown_permission.
 */
export async function createGroup(app: INestApplicationContext, organisationId: string, rawName: string, codes: string[]): Promise<GroupEntity> {
  const name = rawName.trim();
  if (!name) throw validationFailed('name', 'must not be empty');
  if (name.length > 100) throw validationFailed('name', 'must be at most 100 characters');
  const permissions = await app.get(PermissionsService).known(codes);
  return app.get(TransactionHost).run(async (m) => {
    await app.get(OrganisationsService).get(organisationId);
    const repo = m.getRepository(GroupEntity);
    // The unique index on (organisation, lower(name)) decides between concurrent creators.
    const { identifiers } = await repo.createQueryBuilder().insert().values({ organisationId, name, permissions }).orIgnore().returning('id').execute();
    const id = identifiers[0]?.id;
    if (id === undefined) throw validationFailed('name', 'already used by another group in this organisation');
    return repo.findOneByOrFail({ id: String(id) });
  });
}

export const GROUP_COMMANDS: Command[] = [
  {
    words: ['group', 'create'],
    usage: '--org ORG --name N [--permissions a,b]',
    summary: 'create a group with any permission codes, including those the api cannot grant',
    options: ['org', 'name', 'permissions'],
    arity: 0,
    async run(ctx) {
      const [org, name] = [ctx.args.requireOption('org'), ctx.args.requireOption('name')];
      const codes = (ctx.args.option('permissions') ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean);
      const group = await createGroup(await ctx.app(), org, name, codes);
      return {
        json: { id: group.id, name: group.name, permissions: group.permissions },
        text: [`group ${group.id} created in organisation ${group.organisationId}: ${group.name}`, `permissions: ${group.permissions.join(',') || '(none)'}`],
      };
    },
  },
];
