/** The webhooks feature's worker edge: processors, producers and loops, for the app that composes it. */
export * from './delivery-queues';
export * from './outbox-relay.loop';
export * from './webhook-maintenance';
export * from './webhook-slots';
export * from './webhooks-worker.module';
