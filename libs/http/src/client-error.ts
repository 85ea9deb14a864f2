import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { REQUEST_TIMEOUT_MESSAGE } from './slow-clients';

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line and headers are too large (the limit is 16 KB); send long values in a body.',
  ERR_HTTP_REQUEST_TIMEOUT: REQUEST_TIMEOUT_MESSAGE,
};

const envelope = (code: string, message: string): string => JSON.stringify({ error: { code, message } });

/** A whole answer written straight to the socket (there is no response object), then the connection closed. */
function writeRaw(socket: Duplex, status: string, body: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * What Node answers by itself before any handler runs gets the contract's envelope, with
 * `X-Request-Id`, instead of a bare status line; the connection is closed after it:
 * - a request Node cannot take (headers over 16 KB, not HTTP): 400 `invalid_request`;
 * - a request not in within HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS: 408 `invalid_request`
 *   (RFC 9110's status for it, which clients and proxies know; the code stays the contract's);
 * - an `Expect` other than `100-continue`: 400 `invalid_request` (Node's own 417 is not a status of the contract);
 * - `CONNECT` (this is not a proxy): 405 `method_not_allowed`.
 * (A missing `Host` is answered by the front door: the server is made with `requireHostHeader: false`.)
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // An answer already under way (headers sent) cannot be followed by another one on the socket.
    const answering = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
    if (err.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      writeRaw(socket, '408 Request Timeout', envelope('invalid_request', REQUEST_TIMEOUT_MESSAGE));
      return;
    }
    writeRaw(socket, '400 Bad Request', envelope('invalid_request', MESSAGES[err.code ?? ''] ?? 'The request is not valid HTTP.'));
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = envelope('invalid_request', 'Expect: only 100-continue is supported.');
    res.writeHead(400, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': randomUUID(),
      Connection: 'close',
    });
    res.end(body);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    writeRaw(socket, '405 Method Not Allowed', envelope('method_not_allowed', 'CONNECT is not allowed: this is not a proxy.'));
  });
}
