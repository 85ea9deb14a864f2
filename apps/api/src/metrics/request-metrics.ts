import { RouteTable } from '@web/http';
import { Metrics, METRICS } from '@kernel/metrics';
import type { RequestObserver } from '@kernel/logging';
import type { Request, Response } from 'express';

/** The label of a request no route serves: never its path. */
export const UNMATCHED = 'unmatched';

type ScimOperation = { resource: string; operation: string };

/** What a SCIM route does, from its template and method; undefined outside /scim/v2/. */
export function scimOperation(route: string, method: string): ScimOperation | undefined {
  const m = /^\/scim\/v2\/([^/]+)(\/:[^/]+)?$/i.exec(route);
  if (!m) return undefined;
  const resource = m[1] === 'Users' || m[1] === 'Groups' ? m[1] : 'discovery';
  const one = m[2] !== undefined;
  const operation =
    method === 'GET' || method === 'HEAD'
      ? one
        ? 'get'
        : 'list'
      : method === 'POST' && !one
        ? 'create'
        : method === 'PUT' && one
          ? 'replace'
          : method === 'PATCH' && one
            ? 'patch'
            : method === 'DELETE' && one
              ? 'delete'
              : 'other';
  return { resource, operation };
}

const outcomeOf = (status: number): string => (status >= 500 ? 'server_error' : status >= 400 ? 'client_error' : 'success');

/**
 * The api's request metrics, observed on `finish` by the request line's own listener (requestLog's
 * observer: one listener and one clock reading per request for both): duration by method, route
 * template and status, and SCIM operations. The route is the one the
 * router matched, or for a call answered before routing (a refused key, a bad body) the template
 * that would have served it; a path no route serves is `unmatched`. Label children are cached, so a
 * request costs one map lookup and one observation.
 */
export function requestMetrics(metrics: Metrics, routes: RouteTable): RequestObserver {
  const duration = metrics.histogram(METRICS.httpRequestDuration);
  const scim = metrics.counter(METRICS.scimOperations);
  const children = new Map<string, { observe(v: number): void; scim?: { inc(): void } }>();

  return (res: Response, elapsedNs: bigint): void => {
    const req = res.req as Request;
    const method = req.method;
    const route = (req.route as { path?: unknown } | undefined)?.path;
    const template = typeof route === 'string' ? route : (routes.templateOf(req.path, method) ?? UNMATCHED);
    const status = res.statusCode;
    const key = `${method} ${status} ${template}`;
    let child = children.get(key);
    if (!child) {
      const op = scimOperation(template, method);
      const histogram = duration.labels({ method, route: template, status: String(status) });
      child = { observe: (v: number) => histogram.observe(v), scim: op ? scim.labels({ ...op, outcome: outcomeOf(status) }) : undefined };
      children.set(key, child);
    }
    child.observe(Number(elapsedNs) / 1e9);
    child.scim?.inc();
  };
}
