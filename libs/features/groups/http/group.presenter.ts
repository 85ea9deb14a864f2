import type { GroupEntity } from '../group.entity';
import type { PermissionEntity } from '../permission.entity';
import type { GroupDto } from './dto/group.dto';
import type { PermissionDto } from './dto/permission.dto';

/** A group as the wire shows it. */
export const presentGroup = (g: GroupEntity): GroupDto => ({
  id: g.id,
  name: g.name,
  permissions: [...g.permissions].sort(),
  created_at: g.createdAt.toISOString(),
  updated_at: g.updatedAt.toISOString(),
});

export const presentPermission = (p: PermissionEntity): PermissionDto => ({ code: p.code, name: p.name, grantable: p.grantable });
