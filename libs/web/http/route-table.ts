import type { Express } from 'express';

interface RouteEntry {
  path: string;
  pattern: RegExp;
  methods: Set<string>;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A matcher for an express route path such as `/v1/groups/:id` (a trailing slash allowed, as express does). */
export const routePattern = (path: string, flags = ''): RegExp =>
  new RegExp(
    `^${path
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : escape(seg)))
      .join('/')}/?$`,
    flags,
  );

/** The registered routes, to answer 405 with `Allow` for a known path and a wrong method. */
export class RouteTable {
  private entries: RouteEntry[] = [];

  loadFrom(app: Express): void {
    const router = app as unknown as { router?: { stack: unknown[] }; _router?: { stack: unknown[] } };
    const stack = (router.router ?? router._router)?.stack ?? [];
    const byPath = new Map<string, Set<string>>();
    for (const layer of stack as Array<{ route?: { path: string; methods: Record<string, boolean> } }>) {
      if (!layer.route || typeof layer.route.path !== 'string') continue;
      const set = byPath.get(layer.route.path) ?? new Set<string>();
      Object.keys(layer.route.methods).forEach((m) => set.add(m.toUpperCase()));
      byPath.set(layer.route.path, set);
    }
    this.entries = [...byPath].map(([path, methods]) => ({
      path,
      // Case-insensitive, as express matches routes: /V1/Cases is /v1/cases.
      pattern: routePattern(path, 'i'),
      methods,
    }));
  }

  /** Methods registered for the path (HEAD wherever GET is); empty for an unknown path. */
  allowedMethods(path: string): string[] {
    const out = new Set<string>();
    for (const e of this.entries) if (e.pattern.test(path)) e.methods.forEach((m) => out.add(m));
    if (out.has('GET')) out.add('HEAD');
    return [...out].sort();
  }

  /**
   * The registered route path (template, e.g. `/v1/groups/:id`) that serves `path`, preferring one
   * registered for `method`; undefined for a path no route serves. For labels that must never hold a raw path.
   */
  templateOf(path: string, method: string): string | undefined {
    let any: string | undefined;
    for (const e of this.entries) {
      if (!e.pattern.test(path)) continue;
      if (e.methods.has(method) || (method === 'HEAD' && e.methods.has('GET'))) return e.path;
      any ??= e.path;
    }
    return any;
  }
}
