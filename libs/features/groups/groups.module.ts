import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { GroupsService } from './groups.service';
import { PeopleManagersService } from './people-managers.service';
import { PermissionsService } from './permissions.service';

const providers = [PermissionsService, PeopleManagersService, GroupsService];

/** Groups and the permission codes they hold, with the last-people-manager rule. */
@Module({ imports: [CoreModule], providers, exports: providers })
export class GroupsModule {}
