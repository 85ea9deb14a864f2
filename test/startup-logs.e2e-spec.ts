import { spawn } from 'node:child_process';
import { freePort } from './support/private-servers';

/** Everything the built api writes from start until it listens, at `level`. */
async function startupOutput(level: string): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/apps/api/src/main.js'], {
    env: { ...process.env, PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: level, NODE_ENV: 'development' },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  for (let i = 0; i < 150 && !output.includes('api listening') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return output;
}

describe('start-up logs (the built api as a real process)', () => {
  it('at info: no route mapping lines, just the start', async () => {
    const output = await startupOutput('info');
    expect(output).toContain('api listening');
    expect(output).not.toContain('Mapped {');
    expect(output).not.toMatch(/"context":"(RoutesResolver|RouterExplorer)"/);
  }, 30_000);

  it('at debug: the route mapping is there', async () => {
    const output = await startupOutput('debug');
    expect(output).toContain('Mapped {');
  }, 30_000);
});
