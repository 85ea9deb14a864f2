import type { ServerResponse } from 'node:http';
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
