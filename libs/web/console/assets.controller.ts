import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ASSETS, ASSETS_DIR } from './console-views';

/** The stylesheet and the script, read once; pages link them with a content hash, so they are cached for a year. */
@Public({ throttle: false })
@ApiExcludeController()
@Controller('console/assets')
export class ConsoleAssetsController {
  private readonly files = new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(join(ASSETS_DIR, name))]));

  @Get(':name')
  serve(@Param('name') name: string, @Res() res: Response): void {
    const body = this.files.get(name);
    if (!body) throw new NotFoundException();
    res
      .status(200)
      .set({
        'Content-Type': ASSETS[name],
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
        'Cross-Origin-Resource-Policy': 'same-origin',
      })
      .send(body);
  }
}
