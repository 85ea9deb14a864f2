import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import type { Response } from 'express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The rendered reference's Content-Security-Policy: the console's (libs/web/console/console-security.ts)
 * with two relaxations Redoc needs, for /docs only. style-src 'unsafe-inline': Redoc styles itself
 * with styled-components, which writes <style> elements and style attributes at run time, and its
 * standalone bundle gives no way to put a nonce on them. worker-src blob:: Redoc's search index runs
 * in a Web Worker that the bundle starts from a Blob of its own code. Scripts stay 'self' only (the
 * bundle and the one-line start script are files of this origin), and the document is fetched from
 * this origin (connect-src 'self'); nothing comes from another origin.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; worker-src blob:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** Redoc's options: the look of the Integrations section's pages, and colours that keep AA contrast. */
const REDOC_OPTIONS = {
  hideDownloadButton: false,
  expandResponses: '200,201,202',
  jsonSampleExpandLevel: 3,
  pathInMiddlePanel: true,
  sortTagsAlphabetically: false,
  theme: {
    rightPanel: { width: '40%' },
    colors: { primary: { main: '#1d4ed8' }, text: { primary: '#1f2937', secondary: '#374151' } },
    typography: {
      fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
      headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' },
      code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
    },
  },
};

/**
 * Starts Redoc on the served description. Redoc gives each menu entry an aria-label of its title
 * alone; an open section's entry also shows its operations, so its visible text is no longer part
 * of its name (WCAG 2.5.3). Without the label the entry is named by what it shows.
 */
const START = `var reference = document.getElementById('reference');
new MutationObserver(function () {
  reference.querySelectorAll('li[role="menuitem"][aria-label]').forEach(function (li) { li.removeAttribute('aria-label'); });
}).observe(reference, { childList: true, subtree: true });
Redoc.init('/v1/openapi.json', ${JSON.stringify(REDOC_OPTIONS)}, reference);
`;

/**
 * Where Redoc's own styles fail WCAG 2.2 AA: a long property name (a SCIM schema URN) would widen
 * the schema table under the dark samples panel, and the samples' fold buttons are 15 px targets.
 */
const STYLES = `body { margin: 0; }
.property-name, .redoc-wrap td { overflow-wrap: anywhere; word-break: break-word; }
.redoc-json code { line-height: 24px; }
.redoc-json .collapser { width: 24px !important; height: 24px !important; top: 0 !important; left: -28px !important; }
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Integrations API reference</title>
<link rel="stylesheet" href="/docs/reference.css?v=${'{{styles}}'}">
</head>
<body>
<noscript><p>This reference needs JavaScript. The description it shows is <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p></noscript>
<main id="reference"></main>
<script src="/docs/redoc.standalone.js?v=${'{{bundle}}'}"></script>
<script src="/docs/start.js?v=${'{{start}}'}"></script>
</body>
</html>
`;

/** The attribution logo's address in Redoc's bundle. */
export const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

const hash = (body: string | Buffer): string => createHash('sha256').update(body).digest('hex').slice(0, 16);

/**
 * `/docs`: the reference rendered by Redoc from the served description (`/v1/openapi.json`), with
 * no key, every file from this origin. The bundle comes from the `redoc` package as installed.
 */
@Public()
@ApiExcludeController()
@Controller('docs')
export class DocsController {
  private readonly bundle = Buffer.from(
    readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8')
      // The one file the bundle would fetch from elsewhere: the attribution's logo. An empty image
      // instead: it fails to decode, Redoc then hides it and keeps the attribution's words.
      .replaceAll(REDOC_LOGO_URL, 'data:,'),
  );
  private readonly page = PAGE.replace('{{bundle}}', hash(this.bundle))
    .replace('{{start}}', hash(START))
    .replace('{{styles}}', hash(STYLES))
    .replace('<body>', '<body>');

  @Get()
  index(@Res() res: Response): void {
    res.status(200).set(headers('text/html; charset=utf-8', 'no-cache')).send(this.page);
  }

  @Get('redoc.standalone.js')
  redoc(@Res() res: Response): void {
    res.status(200).set(headers('text/javascript; charset=utf-8', 'public, max-age=86400')).send(this.bundle);
  }

  @Get('reference.css')
  styles(@Res() res: Response): void {
    res.status(200).set(headers('text/css; charset=utf-8', 'public, max-age=86400')).send(STYLES);
  }

  @Get('start.js')
  start(@Res() res: Response): void {
    res.status(200).set(headers('text/javascript; charset=utf-8', 'public, max-age=86400')).send(START);
  }
}

function headers(type: string, cache: string): Record<string, string> {
  return {
    'Content-Type': type,
    'Cache-Control': cache,
    'Content-Security-Policy': DOCS_CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
