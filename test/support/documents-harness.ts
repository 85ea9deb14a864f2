import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@kernel/config';
import { Logger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { DOCUMENTS_OPTIONS, type DocumentsOptions } from '@features/documents';
import { startApi, Tenant, TestApi } from './api';

/** The api and a worker, in this process. */
export interface DocumentsHarness {
  api: TestApi;
  worker: INestApplicationContext;
  db: DataSource;
  close: () => Promise<void>;
}

export async function startDocuments(env: Record<string, string>, options: DocumentsOptions = {}): Promise<DocumentsHarness> {
  const config = AppConfig.fromEnv({ ...env, WORKER_HEALTH_PORT: '0' });
  const api = await startApi(env);
  const worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  worker.useLogger(worker.get(Logger));
  // The test's policy (quick retries) in both processes.
  for (const app of [api.app, worker]) Object.assign(app.get<DocumentsOptions>(DOCUMENTS_OPTIONS, { strict: false }), options);
  await worker.init();
  return {
    api,
    worker,
    db: api.app.get(DataSource),
    close: async () => {
      await worker.close();
      await api.close();
    },
  };
}

/** An open case of the tenant's organisation. */
export async function openCase(db: DataSource, organisationId: string): Promise<string> {
  const [row] = await db.query(`INSERT INTO cases (organisation_id, external_ref) VALUES ($1, $2) RETURNING id`, [
    organisationId,
    `ref-${Math.random().toString(36).slice(2)}`,
  ]);
  return String(row.id);
}

type Doc = { id: string; state: string; failure_reason: string | null; translation: any };

/** Reads the document until it is translated or failed. */
export async function settled(api: TestApi, tenant: Tenant, id: string, timeoutMs = 20_000): Promise<{ body: { data: Doc } }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.http().get(`/v1/documents/${id}`).set(tenant.auth);
    if (res.status !== 200) throw new Error(`GET /v1/documents/${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
    if (res.body.data.state === 'translated' || res.body.data.state === 'failed') return res;
    if (Date.now() > deadline) throw new Error(`document ${id} still ${res.body.data.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The document.translated rows of the outbox for a document. */
export async function translatedEvents(db: DataSource, documentId: string): Promise<Array<{ organisation_id: string; data: Record<string, string> }>> {
  return db.query(`SELECT organisation_id::text, data FROM outbox_events WHERE event = 'document.translated' AND data->>'document_id' = $1`, [documentId]);
}
