import { Module } from '@nestjs/common';
import { CoreModule } from '@app/core';
import { DomainModule } from '@app/domain';
import { IdempotencyModule } from '@app/idempotency';
import { GroupPermissionsController } from './group-permissions.controller';
import { GroupsController } from './groups.controller';
import { PermissionsController } from './permissions.controller';

@Module({ imports: [CoreModule, DomainModule, IdempotencyModule], controllers: [GroupsController, GroupPermissionsController, PermissionsController] })
export class GroupsModule {}
