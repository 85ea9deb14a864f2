import { Module } from '@nestjs/common';
import { PeopleModule } from '../people.module';
import { InvitationPageController } from './invitation-page.controller';

/** The invitation accept page (HTML, outside /v1/); its POST takes form bodies (bootstrap URLENCODED_PATHS). */
@Module({ imports: [PeopleModule], controllers: [InvitationPageController] })
export class InvitationPageModule {}
