import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks.module';
import { MetricsModule } from '@kernel/metrics';
import { QueuesModule } from '@kernel/queue';
import { RedisModule } from '@kernel/redis';
import { DeliveryQueues } from './delivery-queues';
import { OutboxRelayLoop } from './outbox-relay.loop';
import { WebhookDeliveriesProcessor } from './webhook-deliveries.processor';
import { WebhookMaintenanceJobs } from './webhook-maintenance';
import { WebhookRetriesProcessor } from './webhook-retries.processor';
import { WebhookSlots } from './webhook-slots';

/**
 * The worker's webhook side: the outbox relay loop, the first-attempt and retry processors, and
 * the maintenance jobs run through WebhookMaintenanceJobs (scheduled by ScheduleKeeper). Needs QueueModule's
 * BullMQ root (the connection) in the application.
 */
@Module({
  imports: [WebhooksModule, QueuesModule, MetricsModule, RedisModule],
  providers: [DeliveryQueues, WebhookSlots, OutboxRelayLoop, WebhookDeliveriesProcessor, WebhookRetriesProcessor, WebhookMaintenanceJobs],
  exports: [WebhookMaintenanceJobs, OutboxRelayLoop, WebhookSlots],
})
export class WebhooksWorkerModule {}
