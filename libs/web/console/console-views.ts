import { Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Eta } from 'eta';
import type { Response } from 'express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { ConsoleContext } from './console-context';
import { breakableText, breakableUrl, escapeHtml } from './breakable';
import { pageHeaders } from './console-security';

export const VIEWS_DIR = join(__dirname, 'views');
export const ASSETS_DIR = join(__dirname, 'assets');
/** The console's only stylesheet and script; served from this origin, never a CDN. */
export const ASSETS: Record<string, string> = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8' };

const pad = (n: number) => String(n).padStart(2, '0');

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
  /** A webhook's (or any) address that wraps at `/` on a narrow screen, never mid-host. */
  url(value: string): string {
    return breakableUrl(value);
  },
  /** Text whose addresses wrap at `/` (titles, confirmations that name a webhook). */
  text(value: string | null | undefined): string {
    return breakableText(value ?? '');
  },
  /** The hidden CSRF field every form carries. */
  csrf(ctx: ConsoleContext): string {
    return `<input type="hidden" name="_csrf" value="${escapeHtml(ctx.csrf)}">`;
  },
};

/** The path of a feature's page template, for `render` and `html`: `views(__dirname)('webhooks')`. */
export const featureViews =
  (consoleDir: string) =>
  (name: string): string =>
    join(consoleDir, 'views', name);

const etaFor = (dir: string): Eta => {
  const eta = new Eta({ views: dir, cache: true, autoEscape: true, defaultExtension: '.eta' });
  eta.loadTemplate('@layout', readFileSync(join(VIEWS_DIR, 'layout.eta'), 'utf8'));
  return eta;
};

/**
 * Server-rendered pages: Eta templates (copied to dist beside the code by the build), escaping
 * every `<%= %>` by default; `<%~ %>` only for HTML built by helpers or includes. The kit's own
 * pages (sign-in, confirm, problem, reveals) are named by name; a feature's pages by the absolute
 * path of their template (`featureViews`), so each feature keeps its templates in its own folder.
 * Every page extends the kit's `@layout`.
 */
@Injectable()
export class ConsoleViews {
  /** The api's public https base (curl lines, links). */
  readonly publicBaseUrl: string;
  /** Whether the api serves its self-signed certificate, so a curl line needs `-k`. */
  readonly selfSignedTls: boolean;

  constructor(config: AppConfig) {
    this.publicBaseUrl = config.publicBaseUrl;
    this.selfSignedTls = config.selfSignedTls;
  }

  /** One Eta per template folder (the kit's, and each feature's), each with the kit's layout. */
  private readonly etas = new Map<string, Eta>([[VIEWS_DIR, etaFor(VIEWS_DIR)]]);
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
    const dir = isAbsolute(view) ? dirname(view) : VIEWS_DIR;
    let eta = this.etas.get(dir);
    if (!eta) this.etas.set(dir, (eta = etaFor(dir)));
    return eta.render(`./${basename(view)}`, { ...data, ctx, h: helpers, assets: this.assetVersion });
  }

  render(res: Response, ctx: ConsoleContext, view: string, data: Record<string, unknown> = {}, status = 200): void {
    res
      .status(status)
      .set(pageHeaders(ctx.nonce))
      .send(this.html(ctx, view, data));
  }
}
