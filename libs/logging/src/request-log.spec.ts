import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import type { Request, Response } from 'express';
import pino from 'pino';
import { requestLog } from './request-log';

function logger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}

/** One request through requestLog at `level`, answered with `status`; what was logged and listened. */
async function answer(level: string, status: number) {
  const { log, lines } = logger(level);
  const req = { id: 'req-1', method: 'GET', path: '/v1/me', headers: { authorization: 'Bearer svc_secret' } } as unknown as Request;
  const res = Object.assign(new EventEmitter(), { req, statusCode: status });
  requestLog(() => log)(req, res as unknown as Response);
  const listeners = res.listenerCount('finish');
  res.emit('finish');
  await new Promise((r) => setImmediate(r));
  return { lines, listeners };
}

describe('requestLog', () => {
  it('writes one line per request at info, with id, method, path, status and time, and no header', async () => {
    const { lines } = await answer('info', 200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request completed', request: { id: 'req-1', method: 'GET', path: '/v1/me' }, response: { status: 200 } });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(JSON.stringify(lines[0])).not.toContain('svc_secret');
  });

  it('writes a 5xx at error', async () => {
    const { lines } = await answer('info', 500);
    expect(lines.map((l) => l.level)).toEqual([50]);
  });

  it('does nothing per request above info: no listener, no line', async () => {
    const { lines, listeners } = await answer('warn', 500);
    expect(listeners).toBe(0);
    expect(lines).toEqual([]);
  });
});
