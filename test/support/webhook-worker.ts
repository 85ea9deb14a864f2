import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@kernel/config';
import { WebhookTls } from '@features/webhooks';
import { Logger } from 'nestjs-pino';
import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { WorkerModule } from '../../apps/worker/src/worker.module';

/** The real worker in process, trusting the test receiver's certificate. */
export async function startWebhookWorker(config: AppConfig, ca?: string): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  if (ca) app.get(WebhookTls).ca = ca;
  return app;
}

/**
 * Spawns a built test worker script (one that prints "worker ready" once up) with `env`, adds it to
 * `children` (for the spec's clean-up), and resolves once it is ready; rejects with its output if it
 * exits first or is not ready within 30 s.
 */
export async function spawnReadyWorker(script: string, env: NodeJS.ProcessEnv, children: ChildProcess[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [script], { cwd: resolve(__dirname, '../..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`worker not ready within 30 s:\n${output}`)), 30_000);
    child.stdout!.on('data', (d) => {
      output += d;
      if (output.includes('worker ready')) {
        clearTimeout(timer);
        ok();
      }
    });
    child.once('exit', (code) => fail(new Error(`worker exited with ${code}:\n${output}`)));
  });
  return child;
}
