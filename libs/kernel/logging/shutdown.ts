import { INestApplicationContext, LoggerService } from '@nestjs/common';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Clean stop on SIGTERM/SIGINT for both apps: Nest's shutdown hooks run (the api stops accepting
 * and finishes requests in flight; the worker finishes or returns jobs), then the process exits 0.
 * If that takes longer than `graceMs`, it exits 1 anyway (a job cut short is taken up again as
 * stalled by another worker; jobs are idempotent for that reason).
 */
export function installGracefulShutdown(app: INestApplicationContext, logger: LoggerService, graceMs: number, what: string): void {
  app.enableShutdownHooks([...SIGNALS], { useProcessExit: true });
  for (const signal of SIGNALS) {
    process.once(signal, () => {
      logger.log(`${signal}: stopping the ${what} (grace ${graceMs} ms)`);
      setTimeout(() => {
        logger.error(`shutdown took longer than ${graceMs} ms: exiting anyway`);
        process.exit(1);
      }, graceMs).unref();
    });
  }
}

/**
 * For a process that is ready (to a probe) before installGracefulShutdown can run — the worker's
 * health server listens during Nest's init — a SIGTERM/SIGINT arriving meanwhile is held instead
 * of killing the process, and sent again by the returned function, once the graceful shutdown is
 * installed, so it stops as cleanly as a signal sent a moment later.
 */
export function holdStopSignals(): () => void {
  const held: NodeJS.Signals[] = [];
  const hold = (signal: NodeJS.Signals) => void held.push(signal);
  for (const signal of SIGNALS) process.on(signal, hold);
  return () => {
    for (const signal of SIGNALS) process.off(signal, hold);
    if (held.length > 0) process.kill(process.pid, held[0]);
  };
}
