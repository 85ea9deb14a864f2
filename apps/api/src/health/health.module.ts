import { Module } from '@nestjs/common';
import { RedisModule } from '@kernel/redis';
import { HealthController } from './health.controller';

@Module({ imports: [RedisModule], controllers: [HealthController] })
export class HealthModule {}
