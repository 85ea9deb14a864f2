import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line and headers are too large (the limit is 16 KB); send long values in a body.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request did not arrive in time.',
};

/**
 * Requests that Node refuses before any handler runs (headers over 16 KB, a request that is not
 * HTTP, one that did not arrive in time) get the contract's envelope — 400 `invalid_request` with
 * `X-Request-Id` — instead of Node's bare status line; the connection is closed after it.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({
      error: { code: 'invalid_request', message: MESSAGES[err.code ?? ''] ?? 'The request is not valid HTTP.' },
    });
    socket.end(
      'HTTP/1.1 400 Bad Request\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
