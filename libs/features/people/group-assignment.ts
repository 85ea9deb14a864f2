import { EntityManager } from 'typeorm';
import { isId, validationFailed } from '@kernel/core';
import { GroupEntity, PermissionsService } from '@features/groups';

/**
 * The group a person is being put into: it must be in the same organisation (else 422 naming
 * `group_id`) and carry only codes the API may grant (else 403 permission_not_grantable, so a
 * connection cannot make someone an owner by moving them into the owners' group).
 * The row is share-locked so a concurrent delete waits until the person is placed.
 */
export async function assignableGroup(m: EntityManager, permissions: PermissionsService, organisationId: string, groupId: string): Promise<GroupEntity> {
  const group = isId(groupId)
    ? await m
        .getRepository(GroupEntity)
        .createQueryBuilder('g')
        .setLock('pessimistic_read')
        .where('g.id = :groupId AND g.organisation_id = :organisationId', { groupId, organisationId })
        .getOne()
    : null;
  if (!group) throw validationFailed('group_id', 'no such group in this organisation');
  await permissions.assertGrantable(group.permissions, `The group "${group.name}"`);
  return group;
}
