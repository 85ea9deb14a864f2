import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import type { Request, Response } from 'express';
import pino from 'pino';
import { pinoOptions } from './logging.module';
import { requestLog, writeRequestLine } from './request-log';

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

  it('with an observer (the metrics), still one listener: the observer is told the time, and no line is written above info', async () => {
    const { log, lines } = logger('warn');
    const observe = jest.fn();
    const req = { id: 'req-1', method: 'GET', path: '/v1/me' } as unknown as Request;
    const res = Object.assign(new EventEmitter(), { req, statusCode: 200 });
    requestLog(() => log, observe)(req, res as unknown as Response);
    expect(res.listenerCount('finish')).toBe(1);
    res.emit('finish');
    await new Promise((r) => setImmediate(r));
    expect(observe).toHaveBeenCalledTimes(1);
    expect(observe.mock.calls[0][0]).toBe(res);
    expect(typeof observe.mock.calls[0][1]).toBe('bigint');
    expect(lines).toEqual([]);
  });
});

describe('writeRequestLine', () => {
  /** What a logger with the processes' own options writes, as strings. */
  function raw(options = pinoOptions('api', 'info')) {
    const out: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        out.push(String(chunk));
        done();
      },
    });
    return { log: pino(options, sink), out };
  }

  it.each([
    ['a plain call', 'req-1', '/v1/me', 200, 1.234],
    ['a refused one with a UUID id', '5a0e4a2c-1f6b-4f3e-9d7c-2f1f1f1f1f1f', '/scim/v2/Users', 404, 0.05],
    ['a 5xx (level error)', 'abc.def:ghi-123', '/v1/cases/x', 503, 12],
    ['a path with quotes, a backslash and non-ASCII', 'req-2', '/v1/"odd"\\päth\u0001', 400, 3],
  ])("writes the same bytes as pino itself would for %s (with the processes' options: bindings, redaction)", (_what, id, path, status, ms) => {
    const { log, out } = raw();
    const child = log.child({ extra: 'binding' });
    const req = { id, method: 'GET', path, headers: { authorization: 'Bearer svc_secret' } } as unknown as Request;
    writeRequestLine(child, req, status, ms);
    child[status >= 500 ? 'error' : 'info']({ request: { id, method: 'GET', path }, response: { status }, responseTime: ms }, 'request completed');
    expect(out).toHaveLength(2);
    const [ours, pinos] = out.map((line) => line.replace(/"time":\d+/, '"time":0'));
    expect(ours).toBe(pinos);
    expect(ours.endsWith('\n')).toBe(true);
    expect(JSON.parse(ours)).toMatchObject({ level: status >= 500 ? 50 : 30, app: 'api', extra: 'binding', request: { id, path } });
  });
});
