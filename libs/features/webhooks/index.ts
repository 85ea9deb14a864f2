/**
 * Webhooks: the contract objects and REST edge, the pages and delivery log, and the delivery
 * pipeline from outbox to receiver (relay, per-webhook slots, queues, processors, attempt, sender,
 * recovery, retention). The only door to this feature from outside it.
 */
export * from './address-policy';
export * from './delivery-attempts.service';
export * from './delivery-log.service';
export * from './delivery-recovery.service';
export * from './delivery-retention.service';
export * from './host-resolver';
export * from './model/give-up';
export * from './model/retry-timetable';
export * from './model/secret-rotation';
export * from './model/webhook-signature';
export * from './model/webhook-url';
export * from './outbox-relay.service';
export * from './webhook-delivery-attempt.entity';
export * from './webhook-delivery.entity';
export * from './webhook-secret-rotation.service';
export * from './webhook-sender';
export * from './webhook-enable.service';
export * from './webhook-switch-off.service';
export * from './webhook-switch-off-warning.service';
export * from './webhook-test.service';
export * from './webhook-tls';
export * from './webhook.entity';
export * from './webhooks.module';
export * from './webhooks.service';
