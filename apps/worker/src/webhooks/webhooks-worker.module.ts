import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { QUEUES } from '@app/queue';
import { DeliveryQueues } from './delivery-queues';
import { OutboxRelayLoop } from './outbox-relay.loop';
import { WebhookDeliveriesProcessor } from '../processors/webhook-deliveries.processor';
import { WebhookMaintenanceJobs } from './webhook-maintenance';
import { WebhookRetriesProcessor } from '../processors/webhook-retries.processor';

/**
 * The worker's webhook side: the outbox relay loop, the first-attempt and retry processors, and
 * the maintenance jobs run through WebhookMaintenanceJobs (scheduled by ScheduleKeeper). Needs QueueModule's
 * BullMQ root (the connection) and the webhook services (WebhooksDomainModule) in the application;
 * QueueModule does not export its queues globally, so the three used here are registered here.
 */
@Module({
  imports: [BullModule.registerQueue({ name: QUEUES.webhookDeliveries }, { name: QUEUES.webhookRetries }, { name: QUEUES.maintenance })],
  providers: [DeliveryQueues, OutboxRelayLoop, WebhookDeliveriesProcessor, WebhookRetriesProcessor, WebhookMaintenanceJobs],
  exports: [WebhookMaintenanceJobs, OutboxRelayLoop],
})
export class WebhooksWorkerModule {}
