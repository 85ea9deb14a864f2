import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';

/**
 * Provides the typed, validated {@link AppConfig}: the one given (tests, CLI), or
 * {@link AppConfig.fromEnv}'s, so every process reads `.env` and the environment the same way.
 */
// The one global module: nearly every provider reads the configuration, and only each process's root makes it (docs/architecture.md).
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig = AppConfig.fromEnv()): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] };
  }
}
