import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { rawErrorBody as answer, RawErrorBody } from './error-render';
import { HEADER_LIMIT_MESSAGE } from './header-limit';
import { REQUEST_TIMEOUT_MESSAGE } from './slow-clients';

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: HEADER_LIMIT_MESSAGE,
  ERR_HTTP_REQUEST_TIMEOUT: REQUEST_TIMEOUT_MESSAGE,
};

/**
 * The path of the request Node refused, where it can still be known: the request in progress on
 * the socket (its head was read), else the request line of the packet that failed to parse.
 */
function refusedUrl(err: { rawPacket?: Buffer }, socket: Duplex): string | undefined {
  const incoming = (socket as { parser?: { incoming?: IncomingMessage | null } }).parser?.incoming;
  if (incoming && !incoming.complete) return incoming.url;
  return /^[A-Z]+ (\S+) /.exec(err.rawPacket?.subarray(0, 512).toString('latin1') ?? '')?.[1];
}

/** A whole answer written straight to the socket (there is no response object), then the connection closed. */
function writeRaw(socket: Duplex, status: string, { type, body }: RawErrorBody): void {
  socket.end(
    `HTTP/1.1 ${status}\r\n` +
      `Content-Type: ${type}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * What Node answers by itself before any handler runs gets the contract's envelope (or the schema
 * of the interface that owns the path, when the path can be known: see ErrorDialect), with `X-Request-Id`, instead of a bare
 * status line; the connection is closed after it:
 * - a request Node cannot take (headers over 16 KB, not HTTP): 400 `invalid_request`;
 * - a request not in within HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS: 408 `invalid_request`
 *   (RFC 9110's status for it, which clients and proxies know; the code stays the contract's);
 * - an `Expect` other than `100-continue`: 400 `invalid_request` (Node's own 417 is not a status of the contract);
 * - `CONNECT` (this is not a proxy): 405 `method_not_allowed`.
 * (A missing `Host` is answered by the front door: the server is made with `requireHostHeader: false`.)
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    // An answer already under way (headers sent) cannot be followed by another one on the socket.
    const answering = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
    if (err.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    const url = refusedUrl(err, socket);
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      writeRaw(socket, '408 Request Timeout', answer(url, 408, 'invalid_request', REQUEST_TIMEOUT_MESSAGE));
      return;
    }
    const message = MESSAGES[err.code ?? ''] ?? 'The request is not valid HTTP.';
    writeRaw(socket, '400 Bad Request', answer(url, 400, 'invalid_request', message));
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const { type, body } = answer(req.url, 400, 'invalid_request', 'Expect: only 100-continue is supported.');
    res.writeHead(400, {
      'Content-Type': type,
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': randomUUID(),
      Connection: 'close',
    });
    res.end(body);
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    writeRaw(socket, '405 Method Not Allowed', answer(req.url, 405, 'method_not_allowed', 'CONNECT is not allowed: this is not a proxy.'));
  });
}
