import { Module } from '@nestjs/common';
import { Metrics } from './metrics';

/** The application's metrics registry: a static module, so every importer shares one per application. */
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
