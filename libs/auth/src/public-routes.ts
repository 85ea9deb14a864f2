import { Injectable, OnModuleInit } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { routePattern } from '@app/http';
import { PUBLIC_KEY, UNTHROTTLED_KEY } from './auth.decorators';

export interface PublicPath {
  /** Whether the refused-key throttle applies (false only for health probes). */
  throttled: boolean;
}

interface Entry extends PublicPath {
  pattern: RegExp;
}

const join = (...parts: string[]): string =>
  `/${parts.flatMap((p) => p.split('/')).filter(Boolean).join('/')}`;
const asList = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : [typeof v === 'string' ? v : '']);

/**
 * The paths whose routes need no key, read from `@Public()` on the controllers, so that the front
 * door can tell them apart before routing. A path counts as public only when every route at it is
 * public; a path that is not listed here needs a key, and the guard checks again after routing.
 */
@Injectable()
export class PublicRoutes implements OnModuleInit {
  private entries: Entry[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const byPath = new Map<string, { isPublic: boolean; throttled: boolean }>();
    for (const wrapper of this.discovery.getControllers()) {
      const cls = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!cls?.prototype) continue;
      for (const name of this.scanner.getAllMethodNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
        if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue; // not a route
        const targets = [handler, cls];
        const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets) === true;
        const throttled = this.reflector.getAllAndOverride<boolean>(UNTHROTTLED_KEY, targets) !== true;
        for (const base of asList(Reflect.getMetadata(PATH_METADATA, cls))) {
          for (const own of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
            const path = join(base, own);
            const seen = byPath.get(path);
            byPath.set(path, seen ? { isPublic: seen.isPublic && isPublic, throttled: seen.throttled || throttled } : { isPublic, throttled });
          }
        }
      }
    }
    this.entries = [...byPath]
      .filter(([, v]) => v.isPublic)
      // Express matches paths case-insensitively; so does this, so that no public route needs a key.
      .map(([path, v]) => ({ pattern: routePattern(path, 'i'), throttled: v.throttled }));
  }

  /** The public path `path` falls on, or undefined when a call to it needs a key. */
  match(path: string): PublicPath | undefined {
    for (const e of this.entries) if (e.pattern.test(path)) return e;
    return undefined;
  }
}
