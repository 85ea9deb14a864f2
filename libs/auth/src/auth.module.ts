import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { BearerAuthGuard } from './bearer-auth.guard';
import { KeyAuthenticator } from './key-authenticator';
import { KeyCache } from './key-cache';
import { RefusedKeyThrottle } from './refused-key-throttle';

/** Installs the bearer-key guard on every route; @Public() opts a route out. */
@Module({
  providers: [KeyCache, RefusedKeyThrottle, KeyAuthenticator, { provide: APP_GUARD, useClass: BearerAuthGuard }],
  exports: [KeyCache, RefusedKeyThrottle],
})
export class AuthModule {}
