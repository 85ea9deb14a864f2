import { Module } from '@nestjs/common';
import { ConsoleModule } from '@web/console';
import { OrganisationsModule } from '../organisations.module';
import { PolicyPageController } from './policy.controller';

/** The Integrations section's data policy page (owners). */
@Module({ imports: [ConsoleModule, OrganisationsModule], controllers: [PolicyPageController] })
export class OrganisationsConsoleModule {}
