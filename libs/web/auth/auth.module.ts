import { DynamicModule, Module, ModuleMetadata, Type } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { KeyLookup } from '@kernel/core';
import { CoreModule } from '@kernel/database';
import { MetricsModule } from '@kernel/metrics';
import { RedisModule } from '@kernel/redis';
import { BearerAuthGuard } from './bearer-auth.guard';
import { ConnectionRateLimit } from './connection-rate-limit';
import { KeyAuthenticator } from './key-authenticator';
import { KeyCache } from './key-cache';
import { KeyGate } from './key-gate';
import { PublicRoutes } from './public-routes';
import { RefusedKeyThrottle } from './refused-key-throttle';

/** Where the keys are looked up: the application binds the domain's implementation, so this library never loads the domain. */
export interface AuthModuleOptions {
  /** The modules that provide `keyLookup`. */
  imports: ModuleMetadata['imports'];
  keyLookup: Type<KeyLookup>;
}

/**
 * Key authentication: the front door's key check (`keyCheck` with KeyGate and PublicRoutes,
 * installed by the api's bootstrap, with the per-connection rate limit) and the guard on every route (scopes); @Public() opts a
 * route out of both.
 */
@Module({})
export class AuthModule {
  static forRoot(options: AuthModuleOptions): DynamicModule {
    return {
      module: AuthModule,
      imports: [DiscoveryModule, CoreModule, RedisModule, MetricsModule, ...(options.imports ?? [])],
      providers: [
        { provide: KeyLookup, useExisting: options.keyLookup },
        KeyCache,
        RefusedKeyThrottle,
        KeyAuthenticator,
        KeyGate,
        ConnectionRateLimit,
        PublicRoutes,
        { provide: APP_GUARD, useClass: BearerAuthGuard },
      ],
      exports: [KeyCache, RefusedKeyThrottle, KeyGate, ConnectionRateLimit, PublicRoutes],
    };
  }
}
