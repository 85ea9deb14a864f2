import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { Metrics } from './metrics';

/**
 * Answers a scrape on a plain node:http response (the api's metrics port, the worker's health
 * port): the text exposition, or a 500 in words should rendering fail. Never throws.
 */
export async function answerScrape(metrics: Metrics, res: ServerResponse, head = false): Promise<void> {
  let body: string;
  try {
    body = await metrics.render();
  } catch (err) {
    const text = `metrics could not be rendered: ${(err as Error).message}\n`;
    res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
    return;
  }
  res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(head ? undefined : body);
}

/**
 * The plain node:http server of the api's metrics port and the worker's health port. A scrape or
 * a probe sends no body and a few headers: a client slower than these limits is not Prometheus
 * nor an orchestrator. A request followed by the client's half-close (`socket.end(request)`, as
 * some health checkers send it) is answered: Node's server would otherwise end the connection on
 * the client's end and drop any answer not written at once (readiness awaits its checks); the
 * connection closes once the answer is written, and the limits still close one whose request never
 * completes.
 */
export function createScrapeServer(handler: RequestListener): Server {
  const server = createServer({ headersTimeout: 5000, requestTimeout: 10_000, connectionsCheckingInterval: 1000 }, handler);
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  return server;
}
