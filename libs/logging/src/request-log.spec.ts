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

function exchange(status: number) {
  const req = { id: 'req-1', method: 'GET', path: '/v1/me', headers: { authorization: 'Bearer svc_secret' } } as unknown as Request;
  const res = Object.assign(new EventEmitter(), { req, statusCode: status }) as unknown as Response;
  return { req, res, finish: () => (res as unknown as EventEmitter).emit('finish') };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('requestLog', () => {
  it('writes one line per request at info, with id, method, path, status and time, and no header', async () => {
    const { log, lines } = logger('info');
    const x = exchange(200);
    requestLog(() => log)(x.req, x.res);
    x.finish();
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request completed', request: { id: 'req-1', method: 'GET', path: '/v1/me' }, response: { status: 200 } });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(JSON.stringify(lines[0])).not.toContain('svc_secret');
  });

  it('writes a 5xx at error', async () => {
    const { log, lines } = logger('info');
    const x = exchange(500);
    requestLog(() => log)(x.req, x.res);
    x.finish();
    await settle();
    expect(lines.map((l) => l.level)).toEqual([50]);
  });

  it('does nothing per request above info: no listener, no line', async () => {
    const { log, lines } = logger('warn');
    const x = exchange(500);
    requestLog(() => log)(x.req, x.res);
    expect((x.res as unknown as EventEmitter).listenerCount('finish')).toBe(0);
    x.finish();
    await settle();
    expect(lines).toEqual([]);
  });
});
