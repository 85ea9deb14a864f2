import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { GroupsModule } from '../groups.module';
import { IdempotencyModule } from '@web/idempotency';
import { GroupPermissionsController } from './group-permissions.controller';
import { GroupsController } from './groups.controller';
import { PermissionsController } from './permissions.controller';

@Module({ imports: [CoreModule, GroupsModule, IdempotencyModule], controllers: [GroupsController, GroupPermissionsController, PermissionsController] })
export class GroupsHttpModule {}
