import { Module } from '@nestjs/common';
import { DomainModule } from '@app/domain';
import { InvitationPageController } from './invitation-page.controller';

/** The invitation accept page (HTML, outside /v1/); its POST takes form bodies (bootstrap URLENCODED_PATHS). */
@Module({ imports: [DomainModule], controllers: [InvitationPageController] })
export class InvitationPageModule {}
