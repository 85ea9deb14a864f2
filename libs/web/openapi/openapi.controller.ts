import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiExcludeEndpoint } from '@nestjs/swagger';
import { Public } from '@web/auth';
import type { Response } from 'express';
import { OpenApiDocument } from './openapi-document';

/** RFC 9110 weak comparison, as If-None-Match requires: `W/` is ignored, `*` matches. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || strip(t) === etag);
}

@Controller('v1/openapi.json')
export class OpenApiController {
  constructor(private readonly doc: OpenApiDocument) {}

  // Served by hand, not by Express's etag: its default ETag is weak, and its freshness check
  // refuses the 304 when the client also sends Cache-Control: no-cache (as Node's fetch does).
  @Get()
  @Public()
  @ApiExcludeEndpoint()
  serve(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res() res: Response): void {
    res.setHeader('ETag', this.doc.etag);
    res.setHeader('Cache-Control', 'no-cache');
    if (etagMatches(ifNoneMatch, this.doc.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type('application/json').send(this.doc.json);
  }
}
