import { Injectable, OnModuleInit, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { routePattern } from '@web/http';
import { PUBLIC_KEY, UNTHROTTLED_KEY } from './auth.decorators';

export interface PublicPath {
  /** Whether the refused-key throttle applies (false only for health probes). */
  throttled: boolean;
}

interface Entry extends PublicPath {
  pattern: RegExp;
  /** The methods served without a key at the path (upper case; '*' for a route of every method). */
  methods: Set<string>;
}

const join = (...parts: string[]): string =>
  `/${parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/')}`;
const asList = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : [typeof v === 'string' ? v : '']);

/**
 * The (path, method) pairs whose routes need no key, read from `@Public()` on the controllers, so
 * that the front door can tell them apart before routing. A pair counts as public only when every
 * route at it is public; any other method at a public path needs a key like any call (401 without
 * one, counted by the throttle; 405 with one). HEAD is public wherever GET is: Express answers it
 * with the GET route, less the body. The guard checks again after routing.
 */
@Injectable()
export class PublicRoutes implements OnModuleInit {
  private entries: Entry[] = [];
  /** Path prefixes served without a key whatever the path and method (see `openArea`). */
  private areas: Array<{ pattern: RegExp; path: PublicPath }> = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const byRoute = new Map<string, { path: string; method: string; isPublic: boolean; throttled: boolean }>();
    for (const wrapper of this.discovery.getControllers()) {
      const cls = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!cls?.prototype) continue;
      for (const name of this.scanner.getAllMethodNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
        const verb = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (verb === undefined) continue; // not a route
        const method = verb === RequestMethod.ALL ? '*' : RequestMethod[verb];
        const targets = [handler, cls];
        const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets) === true;
        const throttled = this.reflector.getAllAndOverride<boolean>(UNTHROTTLED_KEY, targets) !== true;
        for (const base of asList(Reflect.getMetadata(PATH_METADATA, cls))) {
          for (const own of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
            const path = join(base, own);
            const key = `${method} ${path}`;
            const seen = byRoute.get(key);
            byRoute.set(
              key,
              seen ? { ...seen, isPublic: seen.isPublic && isPublic, throttled: seen.throttled || throttled } : { path, method, isPublic, throttled },
            );
          }
        }
      }
    }
    const byPath = new Map<string, Entry>();
    for (const r of byRoute.values()) {
      if (!r.isPublic) continue;
      // Express matches paths case-insensitively; so does this, so that no public route needs a key.
      const entry = byPath.get(r.path) ?? { pattern: routePattern(r.path, 'i'), methods: new Set<string>(), throttled: false };
      entry.methods.add(r.method);
      if (r.method === 'GET') entry.methods.add('HEAD');
      entry.throttled ||= r.throttled;
      byPath.set(r.path, entry);
    }
    // A method that is public at a path but has a keyed route there too is not public.
    for (const r of byRoute.values()) if (!r.isPublic) byPath.get(r.path)?.methods.delete(r.method);
    this.entries = [...byPath.values()].filter((e) => e.methods.size > 0);
  }

  /**
   * Serves every path under `prefix` (the prefix itself included), with any method, without a key:
   * an interface that authenticates by other means (the Integrations section's session) and
   * answers its own unknown paths and methods. Called by the composition root before it listens.
   */
  openArea(prefix: string, options: PublicPath): void {
    const escaped = prefix.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    this.areas.push({ pattern: new RegExp(`^${escaped}(?:/|$)`, 'i'), path: { throttled: options.throttled } });
  }

  /** The public path `path` falls on when `method` is served there without a key; otherwise undefined (a key is needed). */
  match(path: string, method = 'GET'): PublicPath | undefined {
    for (const area of this.areas) if (area.pattern.test(path)) return area.path;
    const m = method.toUpperCase();
    for (const e of this.entries) if (e.pattern.test(path)) return e.methods.has(m) || e.methods.has('*') ? e : undefined;
    return undefined;
  }
}
