import { once } from 'node:events';
import { connect } from 'node:net';
import tls from 'node:tls';

export interface RawAnswer {
  /** The status of the first answer, or null when the connection closed without one. */
  status: number | null;
  headers: string;
  body: string;
  /** Milliseconds from the first byte sent to the close of the connection. */
  closedAfterMs: number;
}

export interface RawOptions {
  /** Pieces written one after the other (a number is a pause of that many ms). */
  parts: Array<string | Buffer | number>;
  /** After the last piece: 'end' half-closes, 'destroy' cuts the connection, 'wait' waits for the server (default). */
  then?: 'end' | 'destroy' | 'wait';
  /** Gives up waiting for the server after this many ms (the answer then has status null). */
  timeoutMs?: number;
  /** With 'wait': wait for the server to close the connection even after a complete answer. */
  untilClosed?: boolean;
  /** Plain TCP instead of TLS (the metrics and health ports). */
  plain?: boolean;
}

/**
 * Speaks to the api over a raw TLS socket (or plain TCP), exactly the bytes given (what no HTTP client sends:
 * truncated bodies, stalls, abrupt closes), and collects what comes back until the server closes.
 */
export async function rawRequest(port: number, options: RawOptions): Promise<RawAnswer> {
  const socket = options.plain ? connect({ host: '127.0.0.1', port }) : tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  socket.on('error', () => undefined);
  await once(socket, options.plain ? 'connect' : 'secureConnect');
  const started = Date.now();
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  const closed = once(socket, 'close').then(() => Date.now() - started);
  for (const part of options.parts) {
    if (socket.destroyed) break;
    if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
    else socket.write(part);
  }
  const then = options.then ?? 'wait';
  if (then === 'end') socket.end();
  if (then === 'destroy') socket.destroy();
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<number>((r) => (timer = setTimeout(() => r(-1), options.timeoutMs ?? 10_000)));
  // A complete answer is enough when the server keeps the connection open.
  const answered = new Promise<number>((r) => {
    const check = () => {
      const at = received.indexOf('\r\n\r\n');
      const m = /content-length: (\d+)/i.exec(received.slice(0, at));
      if (at !== -1 && m && received.length - at - 4 >= Number(m[1])) r(Date.now() - started);
    };
    socket.on('data', check);
  });
  const closedAfterMs = await Promise.race([closed, gaveUp, then === 'wait' && !options.untilClosed ? answered : closed]);
  clearTimeout(timer);
  socket.destroy();
  const at = received.indexOf('\r\n\r\n');
  const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
  return {
    status: status ? Number(status[1]) : null,
    headers: at === -1 ? received : received.slice(0, at),
    body: at === -1 ? '' : received.slice(at + 4),
    closedAfterMs,
  };
}

/** One request written as raw text to the api at `url`, read until the server closes: its head and body (UTF-8). */
export async function rawExchange(url: string, text: string): Promise<{ head: string; body: string }> {
  const r = await rawRequest(Number(new URL(url).port), { parts: [text], untilClosed: true, timeoutMs: 5000 });
  return { head: r.headers, body: Buffer.from(r.body, 'latin1').toString('utf8') };
}
