import { Body, Controller, Get, Logger, Post, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { AppConfig } from '@kernel/config';
import { DomainError } from '@kernel/core';
import { InvitationClosedError } from '../model/invitation.errors';
import { InvitationsService } from '../invitations.service';
import { STATUS_BY_CODE } from '@web/http';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import { acceptedPage, acceptForm, PAGE_HEADERS, problemPage } from './invitation-page.html';

interface AcceptForm {
  token?: unknown;
  name?: unknown;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The page an invitation email links to: a plain server-rendered form outside /v1/, no key
 * needed (the emailed token is the credential). Answers are HTML, errors included.
 */
@Public()
@ApiExcludeController()
@Controller('invitations/accept')
export class InvitationPageController {
  private readonly logger = new Logger(InvitationPageController.name);

  constructor(
    private readonly invitations: InvitationsService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  async show(@Query('token') token: unknown, @Res() res: Response): Promise<void> {
    await this.render(res, async () => {
      const { invitation, organisation } = await this.invitations.preview({ token: text(token) });
      const html = acceptForm({
        organisation: organisation.name,
        email: invitation.email,
        name: invitation.name ?? '',
        token: text(token),
        expiresAt: invitation.expiresAt,
      });
      return [200, html];
    });
  }

  @Post()
  async accept(@Body() form: AcceptForm, @Res() res: Response): Promise<void> {
    await this.render(res, async () => {
      const { person, organisation } = await this.invitations.accept({ token: text(form?.token) }, { name: text(form?.name) });
      return [200, acceptedPage({ organisation: organisation.name, email: person.email, signInUrl: this.config.memberAppBaseUrl })];
    });
  }

  private async render(res: Response, build: () => Promise<[number, string]>): Promise<void> {
    let status: number;
    let html: string;
    try {
      [status, html] = await build();
    } catch (err) {
      [status, html] = this.problem(err);
    }
    res.status(status).set(PAGE_HEADERS).send(html);
  }

  private problem(err: unknown): [number, string] {
    if (err instanceof InvitationClosedError) {
      return [err.reason === 'unknown' ? 404 : 410, problemPage('This invitation cannot be used', err.message)];
    }
    if (err instanceof DomainError) return [STATUS_BY_CODE[err.code], problemPage('The invitation could not be accepted', err.message)];
    const errorId = randomUUID();
    this.logger.error({ err, errorId }, `invitation page failed ${errorId}`);
    return [500, problemPage('Something went wrong', `Something went wrong on our side; please try again later. Error id: ${errorId}.`)];
  }
}
