import { Module } from '@nestjs/common';
import { CoreModule, PreparedStatementsModule } from '@kernel/database';
import { MetricsModule } from '@kernel/metrics';
import { RedisModule } from '@kernel/redis';
import { MailModule } from '@kernel/mail';
import { AddressPolicy } from './address-policy';
import { DeliveryAttemptsService } from './delivery-attempts.service';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveryRecoveryService } from './delivery-recovery.service';
import { DeliveryRetentionService } from './delivery-retention.service';
import { HostResolver } from './host-resolver';
import { OutboxRelayService } from './outbox-relay.service';
import { WebhookSecretRotationService } from './webhook-secret-rotation.service';
import { WebhookSender } from './webhook-sender';
import { WebhookEnableService } from './webhook-enable.service';
import { WebhookSwitchOffService } from './webhook-switch-off.service';
import { WebhookSwitchOffWarningService } from './webhook-switch-off-warning.service';
import { WebhookTestService } from './webhook-test.service';
import { WebhookTls } from './webhook-tls';
import { WebhooksService } from './webhooks.service';

export const WEBHOOK_SERVICES = [
  AddressPolicy,
  HostResolver,
  WebhookTls,
  WebhookSender,
  WebhooksService,
  WebhookTestService,
  DeliveryAttemptsService,
  OutboxRelayService,
  DeliveryRecoveryService,
  WebhookSwitchOffService,
  WebhookSwitchOffWarningService,
  WebhookEnableService,
  DeliveryRetentionService,
  DeliveryLogService,
  WebhookSecretRotationService,
];

/**
 * The webhook services. They need the kernel (TransactionHost, Clock, CursorCodec), Redis (the
 * test-delivery throttle), mail, the metrics and the hot statements' preparation, not the rest of the domain; importing it again is the same module.
 */
@Module({ imports: [CoreModule, PreparedStatementsModule, RedisModule, MailModule, MetricsModule], providers: WEBHOOK_SERVICES, exports: WEBHOOK_SERVICES })
export class WebhooksModule {}
