import { transformFileSync } from '@swc/core';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { batchedLogDestination, LOG_BATCH_BYTES } from './log-destination';

// The module under test, compiled for the child processes below (which cannot load TypeScript).
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
const compiled = path.join(tmp, 'log-destination.js');
fs.writeFileSync(
  compiled,
  transformFileSync(path.join(__dirname, 'log-destination.ts'), { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } })
    .code,
);
const childEnv = { ...process.env, NODE_PATH: path.join(__dirname, '../../../node_modules') };
const prelude = `const { batchedLogDestination } = require(${JSON.stringify(compiled)}); const dest = batchedLogDestination();`;

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * Runs `body` in a fresh node process with a batched destination on its stdout (as `dest`) and
 * answers what reached stdout, its exit code, and stderr.
 */
function run(body: string, stdio: 'pipe' | 'file' = 'pipe') {
  const script = `${prelude} ${body}`;
  if (stdio === 'file') {
    const file = path.join(tmp, 'out.log');
    const fd = fs.openSync(file, 'w');
    const r = spawnSync(process.execPath, ['-e', script], { stdio: ['ignore', fd, 'pipe'], env: childEnv, timeout: 20_000 });
    fs.closeSync(fd);
    return { out: fs.readFileSync(file, 'utf8'), status: r.status, err: String(r.stderr) };
  }
  const r = spawnSync(process.execPath, ['-e', script], { env: childEnv, timeout: 20_000, maxBuffer: 64 * 1024 * 1024 });
  return { out: String(r.stdout), status: r.status, err: String(r.stderr) };
}

const lines = (n: number, tag = 'l') => `for (let i = 0; i < ${n}; i++) dest.write(JSON.stringify({ ${tag}: i }) + '\\n');`;
const numbered = (out: string, tag = 'l') =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, number>)
    .filter((o) => tag in o)
    .map((o) => o[tag]);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('batchedLogDestination', () => {
  it('writes the lines of one turn in one write(2), once the turn is over, in order', async () => {
    const writes = jest.spyOn(fs, 'writeSync').mockImplementation((_fd, data: unknown) => String(data).length);
    try {
      const dest = batchedLogDestination(99);
      for (let i = 0; i < 200; i++) dest.write(`{"n":${i}}\n`);
      expect(writes).not.toHaveBeenCalled();
      await new Promise((r) => setImmediate(r));
      expect(writes).toHaveBeenCalledTimes(1);
      expect(numbered(String(writes.mock.calls[0][1]), 'n')).toEqual(upTo(200));
    } finally {
      writes.mockRestore();
    }
  });

  it('holds no more than its bound: past LOG_BATCH_BYTES it writes at once, within the turn', async () => {
    const writes = jest.spyOn(fs, 'writeSync').mockImplementation((_fd, data: unknown) => String(data).length);
    try {
      const dest = batchedLogDestination(98);
      const line = `${'x'.repeat(1023)}\n`;
      for (let i = 0; i < (3 * LOG_BATCH_BYTES) / 1024; i++) dest.write(line);
      expect(writes.mock.calls.length).toBeGreaterThanOrEqual(2);
      for (const call of writes.mock.calls) expect(String(call[1]).length).toBeLessThanOrEqual(LOG_BATCH_BYTES + line.length);
      await new Promise((r) => setImmediate(r)); // the turn's end flushes the rest (still to the mock)
    } finally {
      writes.mockRestore();
    }
  });

  it.each(['pipe', 'file'] as const)('loses nothing when the process crashes on an uncaught exception (stdout a %s)', (stdio) => {
    const r = run(`${lines(5000)} setImmediate(() => { ${lines(10, 'late')} throw new Error('boom'); });`, stdio);
    expect(r.status).toBe(1);
    expect(r.err).toContain('boom');
    expect(numbered(r.out)).toEqual(upTo(5000));
    expect(numbered(r.out, 'late')).toEqual(upTo(10));
  });

  it('loses nothing on process.exit() right after logging, nor on an unhandled rejection', () => {
    const exit = run(`${lines(300)} process.exit(3);`);
    expect(exit.status).toBe(3);
    expect(numbered(exit.out)).toEqual(upTo(300));
    const rejected = run(`${lines(300)} Promise.reject(new Error('nope'));`);
    expect(rejected.status).toBe(1);
    expect(numbered(rejected.out)).toEqual(upTo(300));
  });

  it('keeps a process whose stdout reader went away alive (EPIPE), and says so once on stderr', () => {
    const script = `const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, ['-e', ${JSON.stringify(
        `${prelude} let n = 0;
         const t = setInterval(() => { dest.write('{"n":' + n++ + '}\\n'); if (n === 200) { clearInterval(t); process.stderr.write('alive after ' + n + '\\n'); } }, 2);`,
      )}], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('exit', (code) => process.stdout.write('exit ' + code + '\\n'));`;
    const r = spawnSync(process.execPath, ['-e', script], { env: childEnv, timeout: 20_000 });
    expect(String(r.stderr)).toContain('alive after 200');
    expect(String(r.stderr).match(/logging stops/g)).toHaveLength(1);
    expect(String(r.stdout)).toContain('exit 0');
  });
});
