import { EntityManager } from 'typeorm';
import { isId, validationFailed } from '@kernel/core';
import { GroupEntity, PermissionsService } from '@features/groups';

/**
 * The group a person is being put into: it must be in the same organisation (else 422 naming
 * `group_id`) and carry only codes the API may grant (else 403 permission_not_grantable, so a
 * connection cannot make someone an owner by moving them into the owners' group).
 * The row is locked for the write that placing the person makes to it (the trigger on people
 * stamps the group's updated_at): taken now, a concurrent delete waits until the person is placed,
 * and two calls placing people into one group queue here instead of each holding a share lock the
 * other's write waits on (a deadlock).
 */
export async function assignableGroup(m: EntityManager, permissions: PermissionsService, organisationId: string, groupId: string): Promise<GroupEntity> {
  const group = isId(groupId)
    ? await m
        .getRepository(GroupEntity)
        .createQueryBuilder('g')
        .setLock('for_no_key_update')
        .where('g.id = :groupId AND g.organisation_id = :organisationId', { groupId, organisationId })
        .getOne()
    : null;
  if (!group) throw validationFailed('group_id', 'no such group in this organisation');
  await permissions.assertGrantable(group.permissions, `The group "${group.name}"`);
  return group;
}
