import pino from 'pino';

/** Bytes gathered before they are written at once, without waiting for the turn's end: the buffer's bound. */
export const LOG_BATCH_BYTES = 32 * 1024;

/** What pino needs of a destination, and the synchronous flush the exit handler calls. */
export interface LogDestination {
  write(line: string): void;
  flushSync(): void;
}

type Boom = ReturnType<typeof pino.destination>;

/**
 * The processes' log destination (stdout): lines are gathered and written together, once per turn of
 * the event loop (a setImmediate after the turn's I/O callbacks) or at once when LOG_BATCH_BYTES are
 * waiting, instead of one write(2) per line as pino's default destination does. Under load a turn
 * finishes many requests, so their request lines leave in one system call; at rest a line waits no
 * longer than the current turn.
 *
 * - Nothing is dropped and order is kept: every write is synchronous (pino's SonicBoom in sync mode,
 *   which also finishes partial writes and retries EAGAIN on a full pipe), so no write is ever in
 *   flight while another starts, and a stdout that stops reading slows the process down rather than
 *   growing a queue: the buffer never holds more than LOG_BATCH_BYTES plus one line.
 * - A crash still flushes what was logged: on `exit` — which Node emits after `process.exit()`, after
 *   an uncaught exception or unhandled rejection has printed its stack, and after the graceful
 *   shutdown — the rest is written synchronously before the process ends. Only a death that runs no
 *   JavaScript (SIGKILL, the kernel's OOM killer, an abort) loses the lines of the turn it cut short.
 * - A stdout that is gone (EPIPE: the log collector exited) is not a crash: logging stops, once said on
 *   stderr, and the process goes on serving.
 *
 * One per process and file descriptor: every Nest application made in the process shares it and its
 * one exit handler, also across module registries (jest loads this module afresh for every test file
 * of a run, in one process): the registry of destinations hangs off `globalThis`.
 */
export function batchedLogDestination(fd = 1): LogDestination {
  const destinations = ((globalThis as Record<symbol, Map<number, LogDestination> | undefined>)[REGISTRY] ??= new Map());
  let destination = destinations.get(fd);
  if (!destination) {
    destination = new BatchedDestination(fd);
    destinations.set(fd, destination);
  }
  return destination;
}

const REGISTRY = Symbol.for('integrations-api.batchedLogDestinations');

class BatchedDestination implements LogDestination {
  private readonly boom: Boom;
  private scheduled = false;
  private broken = false;

  constructor(fd: number) {
    this.boom = pino.destination({ dest: fd, sync: true, minLength: LOG_BATCH_BYTES, maxWrite: 2 * LOG_BATCH_BYTES });
    this.boom.on('error', (err: NodeJS.ErrnoException) => {
      if (this.broken) return;
      this.broken = true;
      process.stderr.write(`logs can no longer be written to fd ${fd} (${err.code ?? err.message}): logging stops\n`);
    });
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    if (this.broken) return;
    this.boom.write(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.broken) return;
    // Anything below LOG_BATCH_BYTES is still in the buffer: one synchronous write of all of it.
    this.boom.flush();
  };

  flushSync(): void {
    if (this.broken) return;
    try {
      this.boom.flushSync();
    } catch {
      // At exit there is nowhere left to say it.
    }
  }
}
