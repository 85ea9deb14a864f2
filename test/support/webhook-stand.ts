import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { WebhookTls } from '@features/webhooks';
import { DataSource } from 'typeorm';
import { startApi, Tenant, TestApi } from './api';
import { MailCatcher } from './mail-catcher';
import { WebhookReceiver } from './webhook-receiver';
import { startWebhookWorker } from './webhook-worker';

export interface MadeHook {
  id: string;
  url: string;
  secret: string;
  /** The path on the receiver: each webhook has its own, so tests never read each other's requests. */
  path: string;
}

/** What the delivery specs run against: the receiver, the api and the real worker (and mail if asked). */
export interface WebhookStand {
  api: TestApi;
  worker: INestApplicationContext;
  receiver: WebhookReceiver;
  db: DataSource;
  mail?: MailCatcher;
  /** Creates a webhook over REST at its own receiver path. */
  hook(t: Tenant, label: string, events?: string[]): Promise<MadeHook>;
  close(): Promise<void>;
}

/**
 * Gives up every delivery still queued or waiting, so that nothing made by one spec file is
 * attempted by a later file's worker (they share the database).
 */
export async function retireDeliveries(db: DataSource | undefined): Promise<void> {
  await db?.query(
    `UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = 'webhook_removed', next_attempt_at = NULL, finished_at = now()
      WHERE state IN ('queued', 'waiting')`,
  );
}

const rand = () => Math.random().toString(36).slice(2, 10);

/** The receiver and an api allowed to reach it (its address allowed, its certificate trusted: the api's own test call reaches it). */
export async function startReceiverApi(env: Record<string, string> = {}): Promise<{ api: TestApi; receiver: WebhookReceiver }> {
  const receiver = await WebhookReceiver.start();
  const api = await startApi({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', ...env });
  api.app.get(WebhookTls).ca = receiver.cert;
  return { api, receiver };
}

/** Starts the stand; `env` is the settings both apps get (the receiver's address is always allowed). */
export async function startWebhookStand(env: Record<string, string>, options: { mail?: boolean } = {}): Promise<WebhookStand> {
  const mail = options.mail ? new MailCatcher() : undefined;
  const settings = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WORKER_HEALTH_PORT: '0', ...env, ...(mail ? { SMTP_URL: await mail.start() } : {}) };
  const { api, receiver } = await startReceiverApi(settings);
  const worker = await startWebhookWorker(AppConfig.fromEnv(settings), receiver.cert);
  const db = api.app.get(DataSource);
  return {
    api,
    worker,
    receiver,
    db,
    mail,
    async hook(t, label, events = ['conversation.ended']) {
      const url = `https://127.0.0.1/${label}-${rand()}`;
      const res = await api.http().post('/v1/webhooks').set(t.auth).send({ url, events });
      expect(res.status).toBe(201);
      return { ...(res.body.data as { id: string; url: string; secret: string }), path: new URL(url).pathname };
    },
    async close() {
      await worker.close();
      await retireDeliveries(db);
      await api.close();
      await receiver.close();
      await mail?.stop();
    },
  };
}
