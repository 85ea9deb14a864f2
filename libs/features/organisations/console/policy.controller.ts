import { Controller, Get, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import {
  ConsoleAccess,
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
  ConsoleViewer,
  ConsoleViews,
  Ctx,
  featureViews,
  noticeFor,
  redirectTo,
  Viewer,
} from '@web/console';
import { OrganisationsService } from '../organisations.service';
import { policyAccepted } from '@kernel/core';
import type { Response } from 'express';

const view = featureViews(__dirname);

const NOTICES: Record<string, string> = {
  accepted: 'The current integrations data policy is accepted: the connections answer again.',
  withdrawn: 'Acceptance was withdrawn: every connection answers module_off until an owner accepts the policy again.',
};

/**
 * The integrations data policy, for the organisation's owners (`organisation.own`): accepting it
 * (allowed while integrations are off for want of it) or withdrawing acceptance.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@ConsoleAccess({ owner: true, whileModuleOff: true })
@Controller('console/policy')
export class PolicyPageController {
  constructor(
    private readonly organisations: OrganisationsService,
    private readonly views: ConsoleViews,
  ) {}

  @Get()
  async show(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Query('done') done: unknown, @Res() res: Response): Promise<void> {
    const org = await this.organisations.get(viewer.organisationId);
    const current = await this.organisations.currentPolicyVersion();
    this.views.render(res, ctx, view('policy'), {
      title: 'Integrations data policy',
      org,
      current,
      accepted: policyAccepted(org.acceptedPolicyVersion, current),
      notice: noticeFor(NOTICES, done),
    });
  }

  @Post('accept')
  async accept(@Viewer() viewer: ConsoleViewer, @Res() res: Response): Promise<void> {
    await this.organisations.setPolicy(viewer.organisationId, true);
    return redirectTo(res, '/console/policy?done=accepted');
  }

  @Get('withdraw')
  confirmWithdraw(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Res() res: Response): void {
    this.views.render(res, ctx, 'confirm', {
      title: 'Withdraw acceptance of the data policy?',
      crumbs: [{ href: '/console/policy', label: 'Data policy' }],
      danger: true,
      explanation: [
        `Every connection of ${viewer.organisationName} will answer module_off to every call from the next one, and webhook deliveries waiting to be sent are given up.`,
        'Nothing is deleted: an owner can accept the policy again here, and the connections answer again from then.',
      ],
      action: '/console/policy/withdraw',
      button: 'Withdraw acceptance',
      cancel: '/console/policy',
    });
  }

  @Post('withdraw')
  async withdraw(@Viewer() viewer: ConsoleViewer, @Res() res: Response): Promise<void> {
    await this.organisations.setPolicy(viewer.organisationId, false);
    return redirectTo(res, '/console/policy?done=withdrawn');
  }
}
