import { Controller, ExecutionContext, Get } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@kernel/core';
import { Public, RequireScopes } from './auth.decorators';
import { BearerAuthGuard } from './bearer-auth.guard';
import type { AuthenticatedRequest, KeyGate } from './key-gate';
import type { Principal } from './principal';

@Controller('x')
class Routes {
  @Get('open') @Public() open(): void {}
  @Get('any') any(): void {}
  @Get('cases') @RequireScopes('cases:read') cases(): void {}
}

const principal = (scopes: string[]): Principal => ({
  keyId: '1',
  keyLastFour: 'abcd',
  connectionId: '2',
  connectionName: 'c',
  connectionCreatedAt: new Date(0),
  organisationId: '3',
  organisationName: 'o',
  scopes,
});

function contextFor(handler: keyof Routes, req: Partial<AuthenticatedRequest>): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
}

/** A key check that admits with `admits` (sync, or after a promise) and counts its calls and the refusals it is told of. */
function gate(admits: Principal | DomainError, async = false) {
  const calls: unknown[] = [];
  const refusals: string[] = [];
  const counted = <E>(reason: string, err: E): E => {
    refusals.push(reason);
    return err;
  };
  const authenticate = (req: AuthenticatedRequest): true | Promise<true> => {
    calls.push(req);
    const run = (): true => {
      if (admits instanceof DomainError) throw admits;
      req.principal = admits;
      return true;
    };
    return async ? Promise.resolve().then(run) : run();
  };
  return { gate: { authenticate, counted } as unknown as KeyGate, calls, refusals };
}

describe('BearerAuthGuard', () => {
  it('lets a @Public() route through without a key check', () => {
    const g = gate(new DomainError('unauthorised', 'no'));
    expect(new BearerAuthGuard(new Reflector(), g.gate).canActivate(contextFor('open', {}))).toBe(true);
    expect(g.calls).toHaveLength(0);
  });

  it('checks only the scope when the front door has put the principal on the request', () => {
    const g = gate(new DomainError('unauthorised', 'no'));
    const guard = new BearerAuthGuard(new Reflector(), g.gate);
    expect(guard.canActivate(contextFor('any', { principal: principal([]) }))).toBe(true);
    expect(guard.canActivate(contextFor('cases', { principal: principal(['cases:read']) }))).toBe(true);
    expect(() => guard.canActivate(contextFor('cases', { principal: principal(['users:read']) }))).toThrow(
      expect.objectContaining({ code: 'scope_missing', message: expect.stringContaining('cases:read') }),
    );
    expect(g.calls).toHaveLength(0);
    expect(g.refusals).toEqual(['scope_missing']);
  });

  it('checks the key itself when a keyed route is reached without the front door, synchronously or not', async () => {
    const sync = gate(principal(['cases:read']));
    expect(new BearerAuthGuard(new Reflector(), sync.gate).canActivate(contextFor('cases', {}))).toBe(true);
    expect(sync.calls).toHaveLength(1);

    const later = gate(principal([]), true);
    await expect(new BearerAuthGuard(new Reflector(), later.gate).canActivate(contextFor('cases', {}))).rejects.toMatchObject({ code: 'scope_missing' });

    const refused = gate(new DomainError('unauthorised', 'The API key is malformed or revoked.'), true);
    await expect(new BearerAuthGuard(new Reflector(), refused.gate).canActivate(contextFor('any', {}))).rejects.toMatchObject({ code: 'unauthorised' });
  });
});
