import { Controller, Get, Module, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MEMBER_APP_STAND_IN_PATH } from '@kernel/config';
import { Public } from '@web/auth';
import { DigitsIdPipe } from '@web/http';
import type { Response } from 'express';

const HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1d2430;line-height:1.5}' +
  'code{background:#eef1f5;padding:0 .25rem;border-radius:3px}.muted{color:#4b5465}';

const page = (title: string, lead: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Member app stand-in</title><style>${STYLE}</style></head>
<body>
<main>
<h1>${title}</h1>
<p>${lead}</p>
<p>This page is the integrations API’s stand-in for the platform’s member app, not the member app itself: this installation has no
<code>MEMBER_APP_BASE_URL</code> set, so the member-app addresses the API answers (a case’s conversation link, the sign-in link in mails)
point here, under the API’s own address, instead of at nothing.</p>
<p class="muted">In production, set <code>MEMBER_APP_BASE_URL</code> to the member app’s address (see docs/operations/configuration.md); these links then open the member app and this page is no longer served.</p>
</main>
</body>
</html>
`;

/**
 * The two member-app addresses the api hands out, answered by the api itself while
 * MEMBER_APP_BASE_URL is unset (development, tests): an honest page saying what it stands in
 * for, so that a CaseUrl answered by `npm run dev` opens something. Outside the contract (no
 * /v1/, not in the OpenAPI description); ApiModule composes it only while no member app is
 * configured (AppConfig.memberAppStandIn).
 */
@Public()
@ApiExcludeController()
@Controller(MEMBER_APP_STAND_IN_PATH.slice(1))
export class MemberAppStandInController {
  @Get()
  home(@Res() res: Response): void {
    this.send(res, 'The member app', 'Here a person of an organisation would sign in to the member app.');
  }

  @Get('cases/:id/conversations/new')
  newConversation(@Param('id', DigitsIdPipe) id: string, @Res() res: Response): void {
    this.send(res, `A new conversation in case ${id}`, `Here the member app would start an interpreted conversation in case ${id}.`);
  }

  private send(res: Response, title: string, lead: string): void {
    res.status(200).set(HEADERS).send(page(title, lead));
  }
}

@Module({ controllers: [MemberAppStandInController] })
export class MemberAppStandInModule {}
