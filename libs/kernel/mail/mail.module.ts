import { Module } from '@nestjs/common';
import { Mailer } from './mailer';

/** Outgoing mail, on its own so that people and webhooks both use it without importing each other. */
@Module({ providers: [Mailer], exports: [Mailer] })
export class MailModule {}
