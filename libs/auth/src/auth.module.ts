import { Module } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { BearerAuthGuard } from './bearer-auth.guard';
import { KeyAuthenticator } from './key-authenticator';
import { KeyCache } from './key-cache';
import { KeyGate } from './key-gate';
import { PublicRoutes } from './public-routes';
import { RefusedKeyThrottle } from './refused-key-throttle';

/**
 * Key authentication: the front door's key check (`keyCheck` with KeyGate and PublicRoutes,
 * installed by the api's bootstrap) and the guard on every route (scopes); @Public() opts a
 * route out of both.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [KeyCache, RefusedKeyThrottle, KeyAuthenticator, KeyGate, PublicRoutes, { provide: APP_GUARD, useClass: BearerAuthGuard }],
  exports: [KeyCache, RefusedKeyThrottle, KeyGate, PublicRoutes],
})
export class AuthModule {}
