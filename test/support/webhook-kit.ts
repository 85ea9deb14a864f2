import { HostResolver } from '@features/webhooks';
import { Tenant, TestApi } from './api';
import { OpenApiChecker } from './openapi-check';

export type Res = { status: number; body: any; text: string; headers: Record<string, string> };
export type Method = 'get' | 'post' | 'delete';

const rand = () => Math.random().toString(36).slice(2, 10);

/** The webhook management specs' shared calls; getters, because the api starts in beforeAll. */
export function webhookKit(getApi: () => TestApi, checker: () => OpenApiChecker) {
  const call = (t: Tenant, method: Method, path: string, body?: unknown, key?: string): Promise<Res> => {
    let req = getApi().http()[method](path).set(t.auth);
    if (key) req = req.set('Idempotency-Key', key);
    return (body === undefined ? req : req.send(body as object)) as unknown as Promise<Res>;
  };
  const expectError = (res: Res, status: number, code: string, method: string, template: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker().check(method, template, status, res.body);
  };
  /** Each webhook gets its own path (on the receiver), so tests never read each other's requests. */
  const hookUrl = (label = 'h') => `https://127.0.0.1/${label}-${rand()}`;
  const create = async (t: Tenant, body: Record<string, unknown> = {}) => {
    const res = await call(t, 'post', '/v1/webhooks', { url: hookUrl(), events: ['conversation.ended'], ...body });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; url: string; secret: string; events: string[] };
  };
  /** Makes the named hosts resolve to the given addresses (the resolver hook); others resolve for real. */
  const resolveAs = (map: Record<string, string[]>) => {
    const resolver = getApi().app.get(HostResolver);
    const real = resolver.resolve.bind(resolver);
    jest
      .spyOn(resolver, 'resolve')
      .mockImplementation(async (host) => (map[host] ? map[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) : real(host)));
  };
  return { call, expectError, hookUrl, create, resolveAs, rand };
}
