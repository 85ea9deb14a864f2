import { Module } from '@nestjs/common';
import { GroupPermissionsController } from './group-permissions.controller';
import { GroupsController } from './groups.controller';
import { PermissionsController } from './permissions.controller';

@Module({ controllers: [GroupsController, GroupPermissionsController, PermissionsController] })
export class GroupsModule {}
