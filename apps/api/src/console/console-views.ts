import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { Eta } from 'eta';
import type { Response } from 'express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConsoleContext } from './console-context';
import { pageHeaders } from './console-security';

export const VIEWS_DIR = join(__dirname, 'views');
export const ASSETS_DIR = join(__dirname, 'assets');
/** The console's only stylesheet and script; served from this origin, never a CDN. */
export const ASSETS: Record<string, string> = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8' };

const pad = (n: number) => String(n).padStart(2, '0');
const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Helpers templates call as `it.h.…`; each returns escaped HTML for `<%~ %>`. */
export const helpers = {
  /**
   * A time as `<time>`: UTC in the HTML (the page reads fully without JavaScript); console.js
   * rewrites the text into the reader's time zone and keeps UTC in the title.
   */
  time(value: Date | string | null | undefined, empty = 'never'): string {
    if (value === null || value === undefined) return escapeHtml(empty);
    const d = new Date(value);
    if (Number.isNaN(d.getTime())) return escapeHtml(empty);
    const utc = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
    return `<time datetime="${d.toISOString()}" title="${utc}">${utc}</time>`;
  },
  /** The hidden CSRF field every form carries. */
  csrf(ctx: ConsoleContext): string {
    return `<input type="hidden" name="_csrf" value="${escapeHtml(ctx.csrf)}">`;
  },
};

/**
 * Server-rendered pages: Eta templates (apps/api/src/console/views, copied to dist by the build),
 * escaping every `<%= %>` by default; `<%~ %>` only for HTML built by helpers or includes.
 */
@Injectable()
export class ConsoleViews {
  /** The api's public https base (curl lines, links). */
  readonly publicBaseUrl: string;

  constructor(config: AppConfig) {
    this.publicBaseUrl = config.publicBaseUrl;
  }

  private readonly eta = new Eta({ views: VIEWS_DIR, cache: true, autoEscape: true, defaultExtension: '.eta' });
  /** `?v=` content hashes, so the assets can be cached for a year and still change with a release. */
  readonly assetVersion: Record<string, string> = Object.fromEntries(
    Object.keys(ASSETS).map((name) => [
      name,
      createHash('sha256')
        .update(readFileSync(join(ASSETS_DIR, name)))
        .digest('hex')
        .slice(0, 12),
    ]),
  );

  html(ctx: ConsoleContext, view: string, data: Record<string, unknown> = {}): string {
    return this.eta.render(`./${view}`, { ...data, ctx, h: helpers, assets: this.assetVersion });
  }

  render(res: Response, ctx: ConsoleContext, view: string, data: Record<string, unknown> = {}, status = 200): void {
    res
      .status(status)
      .set(pageHeaders(ctx.nonce))
      .send(this.html(ctx, view, data));
  }
}
