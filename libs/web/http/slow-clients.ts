import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { rawErrorBody } from './error-render';

/** The limits on a slow client (AppConfig's HTTP_* settings, in ms). */
export interface SlowClientLimits {
  /** The request line and headers must be in within this long. */
  headersTimeoutMs: number;
  /** A body that makes no progress for this long is cut. */
  bodyIdleTimeoutMs: number;
  /** The whole request (headers and body) must be in within this long. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
}

/**
 * Options for the api's HTTPS server. Node checks the header and request deadlines only every
 * `connectionsCheckingInterval` (30 s by default), which would let a stalled client stay far past
 * them: it is checked at least every second here. What Node answers on a deadline goes through
 * `answerClientErrors` (408 in the envelope).
 */
export function serverTimeouts(limits: SlowClientLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/**
 * A client may write its whole request and then half-close its side (`socket.end(request)`: some
 * HTTP clients, proxies and health checkers do). Node's HTTP server ends the connection when the
 * client's side ends unless told to allow half-open connections, which drops every answer not
 * written at once, i.e. that of any handler that awaits. With this (and `allowHalfOpen` in the TLS
 * server's options, which keeps the socket writable after the client's end) the answer is written
 * and then the connection closes. A half-closed connection whose request never completes is still
 * closed by the deadlines above (headers, body idle, whole request).
 */
export function answerHalfClosedRequests(server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}

export const REQUEST_TIMEOUT_MESSAGE = 'The request did not arrive in time.';
const STALLED_BODY_MESSAGE = 'The request body stopped arriving; send the whole body without pausing.';

/**
 * Cuts a request whose body makes no progress for `idleMs`: the whole-request deadline has to
 * leave room for a 10 MB upload on a slow line, so it cannot also catch a body that stalls at
 * once. Armed while the body is still coming in (the socket's idle timer: no byte either way),
 * disarmed when it has all arrived. Answers 408 in the envelope if nothing was answered yet,
 * then closes the connection; a reader still waiting for the body sees the request aborted.
 */
export function cutStalledBodies(idleMs: number): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.complete || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) return;
    if (req.headers['content-length'] === '0') return;
    const socket = req.socket;
    const stalled = () => {
      disarm();
      if (res.headersSent || !socket.writable) {
        socket.destroy();
        return;
      }
      // In the schema of the interface that owns the path (see ErrorDialect).
      const { type, body } = rawErrorBody(req.url, 408, 'invalid_request', STALLED_BODY_MESSAGE);
      res.shouldKeepAlive = false;
      res.writeHead(408, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
      res.end(body, () => socket.destroy());
    };
    const disarm = () => {
      req.off('timeout', stalled);
      req.off('end', disarm);
      req.off('close', disarm);
      // Once the answer is out, the socket's timer is Node's keep-alive limit: not ours to clear.
      if (!res.writableFinished) socket.setTimeout(0);
    };
    // req.setTimeout arms the socket's idle timer; Node's server emits 'timeout' on the request.
    req.setTimeout(idleMs, stalled);
    req.once('end', disarm);
    req.once('close', disarm);
  };
}
