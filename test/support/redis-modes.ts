import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freePort, waitForPort } from './private-servers';

/**
 * Redis as operators run it, for the specs of docs/operations/scale.md, "Redis: TLS, ACL, Sentinel, Cluster": real
 * `redis-server` and `redis-sentinel` processes (Debian packages) on free ports, in a temp dir each,
 * never the shared 6379. Every process started here is killed when the test process exits.
 */

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((p) => p.kill('SIGKILL')));

function start(program: string, conf: string, cwd: string): ChildProcess {
  const proc = spawn(program, [conf], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  return proc;
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGKILL');
  await exited;
}

/** A test CA and a certificate it signed for 127.0.0.1 and localhost (openssl), in `dir`. */
export function makeCertificates(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=integrations test CA']);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext']);
  return { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') };
}

/**
 * A redis-server that speaks TLS only (no plain port) and knows one ACL user: the `default` user is
 * switched off, so a connection without TLS, or without this user's name and password, gets nowhere.
 */
export class TlsAclRedis {
  private constructor(
    readonly port: number,
    readonly caFile: string,
    readonly user: string,
    readonly password: string,
    private readonly dir: string,
    private readonly proc: ChildProcess,
  ) {}

  static async start(user = 'ia-app', password = 'p@ss:w0rd/with%signs'): Promise<TlsAclRedis> {
    const dir = mkdtempSync(join(tmpdir(), 'ia-redis-tls-'));
    const { caFile, certFile, keyFile } = makeCertificates(dir);
    const port = await freePort();
    const conf = [
      'port 0',
      `tls-port ${port}`,
      'bind 127.0.0.1',
      `tls-cert-file ${certFile}`,
      `tls-key-file ${keyFile}`,
      `tls-ca-cert-file ${caFile}`,
      'tls-auth-clients no',
      'save ""',
      'appendonly no',
      'user default off',
      `user ${user} on >${password} ~* &* +@all`,
    ];
    writeFileSync(join(dir, 'redis.conf'), conf.join('\n') + '\n');
    const proc = start('redis-server', join(dir, 'redis.conf'), dir);
    await waitForPort(port);
    return new TlsAclRedis(port, caFile, user, password, dir, proc);
  }

  /** REDIS_URL with the ACL user, the password percent-encoded as a URL needs it. */
  get url(): string {
    return `rediss://${encodeURIComponent(this.user)}:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}`;
  }

  /** An administrative connection, made without the factory under test. */
  admin(): Redis {
    return new Redis({ host: '127.0.0.1', port: this.port, username: this.user, password: this.password, tls: { ca: readFileSync(this.caFile) } });
  }

  async stop(): Promise<void> {
    await stop(this.proc);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A master and a replica (both with a password) watched by one redis-sentinel (quorum 1, with a
 * password of its own): enough for `SENTINEL FAILOVER`, which needs no agreement of others.
 */
export class SentinelSet {
  readonly master = 'ia-master';
  readonly password = 'redis-secret';
  readonly sentinelPassword = 'sentinel-secret';
  private readonly procs: ChildProcess[] = [];
  private constructor(
    private readonly dir: string,
    readonly ports: { first: number; second: number; sentinel: number },
  ) {}

  static async start(): Promise<SentinelSet> {
    const dir = mkdtempSync(join(tmpdir(), 'ia-sentinel-'));
    const set = new SentinelSet(dir, { first: await freePort(), second: await freePort(), sentinel: await freePort() });
    const server = (port: number, replicaOf?: number) => [
      `port ${port}`,
      'bind 127.0.0.1',
      'save ""',
      'appendonly no',
      `requirepass ${set.password}`,
      `masterauth ${set.password}`,
      `dir ${dir}`,
      `dbfilename dump-${port}.rdb`,
      ...(replicaOf ? [`replicaof 127.0.0.1 ${replicaOf}`] : []),
    ];
    for (const [name, lines] of [
      ['first.conf', server(set.ports.first)],
      ['second.conf', server(set.ports.second, set.ports.first)],
    ] as const) {
      writeFileSync(join(dir, name), lines.join('\n') + '\n');
      set.procs.push(start('redis-server', join(dir, name), dir));
    }
    await waitForPort(set.ports.first);
    await waitForPort(set.ports.second);
    writeFileSync(
      join(dir, 'sentinel.conf'),
      [
        `port ${set.ports.sentinel}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `requirepass ${set.sentinelPassword}`,
        `sentinel monitor ${set.master} 127.0.0.1 ${set.ports.first} 1`,
        `sentinel auth-pass ${set.master} ${set.password}`,
        `sentinel down-after-milliseconds ${set.master} 2000`,
        `sentinel failover-timeout ${set.master} 10000`,
      ].join('\n') + '\n',
    );
    set.procs.push(start('redis-sentinel', join(dir, 'sentinel.conf'), dir));
    await waitForPort(set.ports.sentinel);
    // Ready when the sentinel knows the replica (a failover needs one to promote) and it is in sync.
    await set.until(async () => {
      const replicas = (await set.sentinel((s) => s.call('SENTINEL', 'REPLICAS', set.master))) as string[][];
      return replicas.some((r) => r.includes('master-link-status') && r[r.indexOf('master-link-status') + 1] === 'ok');
    }, 'the sentinel to see the replica in sync');
    return set;
  }

  /** The settings that point the processes at this set. */
  env(): Record<string, string> {
    return {
      REDIS_URL: `redis://:${this.password}@ignored-with-sentinels:1`,
      REDIS_SENTINELS: `127.0.0.1:${this.ports.sentinel}`,
      REDIS_SENTINEL_MASTER: this.master,
      REDIS_SENTINEL_PASSWORD: this.sentinelPassword,
    };
  }

  /** The master's port as the sentinel says it. */
  async masterPort(): Promise<number> {
    const [, port] = (await this.sentinel((s) => s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.master))) as string[];
    return Number(port);
  }

  /** Makes the replica the master (SENTINEL FAILOVER) and waits until the sentinel names it and it says so itself. */
  async failover(): Promise<{ from: number; to: number }> {
    const from = await this.masterPort();
    const to = from === this.ports.first ? this.ports.second : this.ports.first;
    await this.sentinel((s) => s.call('SENTINEL', 'FAILOVER', this.master));
    await this.until(async () => (await this.masterPort()) === to && (await this.role(to)) === 'master', `port ${to} to be the master`);
    return { from, to };
  }

  /** `master` or `slave`, as the server on `port` says. */
  async role(port: number): Promise<string> {
    const r = this.server(port);
    try {
      return ((await r.call('ROLE')) as string[])[0];
    } finally {
      r.disconnect();
    }
  }

  /** A direct connection to one of the two servers (not through the factory under test). */
  server(port: number): Redis {
    return new Redis({ host: '127.0.0.1', port, password: this.password, maxRetriesPerRequest: 1 });
  }

  async stop(): Promise<void> {
    for (const p of this.procs) await stop(p);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async sentinel<T>(use: (s: Redis) => Promise<T>): Promise<T> {
    const s = new Redis({ host: '127.0.0.1', port: this.ports.sentinel, password: this.sentinelPassword, maxRetriesPerRequest: 1 });
    try {
      return await use(s);
    } finally {
      s.disconnect();
    }
  }

  async until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Three redis-server masters in cluster mode (no replicas), slots spread by `redis-cli --cluster create`. */
export class ClusterNodes {
  private readonly procs: ChildProcess[] = [];
  private constructor(
    private readonly dir: string,
    readonly ports: number[],
  ) {}

  static async start(): Promise<ClusterNodes> {
    const dir = mkdtempSync(join(tmpdir(), 'ia-cluster-'));
    const nodes = new ClusterNodes(dir, [await freePort(), await freePort(), await freePort()]);
    for (const port of nodes.ports) {
      const conf = join(dir, `${port}.conf`);
      writeFileSync(
        conf,
        [`port ${port}`, 'bind 127.0.0.1', 'cluster-enabled yes', `cluster-config-file nodes-${port}.conf`, `dir ${dir}`, 'save ""', 'appendonly no'].join(
          '\n',
        ) + '\n',
      );
      nodes.procs.push(start('redis-server', conf, dir));
    }
    for (const port of nodes.ports) await waitForPort(port);
    execFileSync('redis-cli', ['--cluster', 'create', ...nodes.ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      stdio: 'pipe',
    });
    const deadline = Date.now() + 30_000;
    for (const port of nodes.ports) {
      for (;;) {
        const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
        const info = await (r.call('CLUSTER', 'INFO') as Promise<string>).finally(() => r.disconnect());
        if (info.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster not ok on ${port} after 30 s`);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    return nodes;
  }

  async stop(): Promise<void> {
    for (const p of this.procs) await stop(p);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
