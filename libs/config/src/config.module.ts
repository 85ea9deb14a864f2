import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule, ConfigService } from '@nestjs/config';
import { AppConfig } from './app-config';
import { EnvSchema, validateEnv } from './env.schema';

/**
 * Loads `.env` (when present) through @nestjs/config, validates it against {@link EnvSchema}
 * and provides the typed {@link AppConfig}. Pass `config` to use a ready-made one (tests, CLI).
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config?: AppConfig): DynamicModule {
    const provider = config
      ? { provide: AppConfig, useValue: config }
      : {
          provide: AppConfig,
          inject: [ConfigService],
          useFactory: (cs: ConfigService) => new AppConfig(cs.get<EnvSchema>('__validated') as EnvSchema),
        };
    return {
      module: ConfigModule,
      imports: config
        ? []
        : [
            NestConfigModule.forRoot({
              ignoreEnvFile: process.env.NODE_ENV === 'test',
              validate: (raw) => ({ ...raw, __validated: validateEnv(raw) }),
            }),
          ],
      providers: [provider],
      exports: [AppConfig],
    };
  }
}
