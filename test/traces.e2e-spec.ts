import { ChildProcess, execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { MailCatcher } from './support/mail-catcher';
import { WebhookReceiver } from './support/webhook-receiver';
import { freePort } from './support/private-servers';

/**
 * Traces, over the built api and worker as real processes: a test-only hook
 * (test/support/otel-memory-hook.js, preloaded with `node -r`) starts their own tracing with an
 * InMemorySpanExporter instead of OTLP/HTTP and hands the spans back over IPC. Everything else is
 * the processes' real code, Postgres, Redis, BullMQ, SMTP and an HTTPS receiver.
 */
const ROOT = join(__dirname, '..');
const HOOK = join(__dirname, 'support/otel-memory-hook.js');
const SLOW = 60_000;

interface PlainSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  scope: string;
  service: string;
  attributes: Record<string, unknown>;
}
interface Report {
  started: boolean;
  serviceName: string | null;
  sdkLoaded: boolean;
  spans: PlainSpan[];
}
const SERVER = 1;
const CLIENT = 2;
const PRODUCER = 3;
const CONSUMER = 4;

/** The test run's environment with `env` over it; the processes verify certificates as in production (the test process itself does not). */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete out.NODE_TLS_REJECT_UNAUTHORIZED;
  return out;
}

class Proc {
  output = '';
  private constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d) => (this.output += d));
    child.stderr?.on('data', (d) => (this.output += d));
  }

  /** Starts dist/apps/<which>/src/main.js with the hook; resolves once its start-up line is logged. */
  static async start(which: 'api' | 'worker', env: Record<string, string | undefined>, options: { hook?: boolean } = {}): Promise<Proc> {
    const child = fork(join(ROOT, `dist/apps/${which}/src/main.js`), [], {
      cwd: ROOT,
      execArgv: options.hook === false ? [] : ['-r', HOOK],
      env: childEnv({ LOG_LEVEL: 'info', ...env }),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const proc = new Proc(child);
    const ready = which === 'api' ? 'api listening' : 'worker started';
    const deadline = Date.now() + 30_000;
    while (!proc.output.includes(ready)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${which} did not start:\n${proc.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return proc;
  }

  report(): Promise<Report> {
    return new Promise((resolve) => {
      this.child.once('message', (m) => resolve(m as Report));
      this.child.send('spans');
    });
  }

  /** Waits until a span matching `match` has been recorded (spans are exported as they end). */
  async waitForSpan(match: (s: PlainSpan) => boolean, what: string): Promise<Report> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const report = await this.report();
      if (report.spans.some(match)) return report;
      if (Date.now() > deadline) throw new Error(`no span ${what}; recorded: ${report.spans.map((s) => `${s.scope}:${s.name}`).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}

const rand = () => randomBytes(4).toString('hex');

/** Stands in for an OpenTelemetry collector's OTLP/HTTP receiver: keeps what is POSTed, answers 200. */
class Collector {
  private constructor(
    private readonly server: Server,
    readonly posts: Array<{ path: string; contentType: string; body: any }>,
  ) {}

  static async start(): Promise<Collector> {
    const posts: Collector['posts'] = [];
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: unknown = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          // Not JSON: kept as null, and the spec's expectations say what was missing.
        }
        posts.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Collector(server, posts);
  }

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('traces (OpenTelemetry) across the api, the outbox, the relay and each attempt', () => {
  let mail: MailCatcher;
  let receiver: WebhookReceiver;
  let key: string;
  let organisationId: string;
  let smtp: string;
  const procs: Proc[] = [];
  /** An api and a worker tracing (to an in-memory exporter), and an api with the endpoint unset. */
  let traced: { api: Proc; base: string };
  let worker: Proc;
  let untraced: { api: Proc; base: string };
  let exporting: { api: Proc; base: string };
  let collector: Collector;
  const sql = async (text: string, params: unknown[] = []) => {
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      return (await db.query(text, params)).rows;
    } finally {
      await db.end();
    }
  };

  beforeAll(async () => {
    mail = new MailCatcher();
    smtp = await mail.start();
    receiver = await WebhookReceiver.start();
    const demo = JSON.parse(
      execFileSync(process.execPath, ['dist/apps/admin/src/main.js', 'demo', 'setup', '--name', `Traces ${rand()}`, '--json'], { cwd: ROOT, encoding: 'utf8' }),
    );
    key = demo.key;
    organisationId = demo.organisation_id;
    collector = await Collector.start();
    // The processes start together (start-up is most of this spec's time).
    [traced, worker, untraced, exporting] = await Promise.all([
      startApi({ SMTP_URL: smtp, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }),
      Proc.start('worker', {
        WORKER_HEALTH_PORT: '0',
        WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
        // The receiver's self-signed certificate, trusted the way an operator trusts a private CA.
        NODE_EXTRA_CA_CERTS: receiver.tls.certFile,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_SERVICE_NAME: 'traces-spec-worker',
        // The first retry 60 ms after a failure instead of a minute (tests only).
        WEBHOOK_RETRY_SCALE: '0.001',
      }),
      startApi({ SMTP_URL: smtp, OTEL_EXPORTER_OTLP_ENDPOINT: '' }),
      // No hook: the process's own bootstrap, exporting over OTLP/HTTP to the collector stand-in.
      startApi({ OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.base}/otlp/` }, { hook: false }),
    ]);
    procs.push(worker);
  }, SLOW);

  afterAll(async () => {
    for (const p of procs) await p.stop();
    // Nothing of this organisation is left for a later spec's worker to relay or attempt.
    if (organisationId) {
      await sql(`UPDATE outbox_events SET relayed_at = now() WHERE organisation_id = $1 AND relayed_at IS NULL`, [organisationId]);
      await sql(
        `UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = 'webhook_removed', next_attempt_at = NULL, finished_at = now()
          WHERE organisation_id = $1 AND state IN ('queued', 'waiting')`,
        [organisationId],
      );
    }
    await receiver?.close();
    await mail?.stop();
    await collector?.close();
  }, SLOW);

  /** An api (and its https base) with these extra settings. */
  const startApi = async (env: Record<string, string | undefined>, options: { hook?: boolean } = {}) => {
    const port = await freePort();
    const api = await Proc.start(
      'api',
      { PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', ...env },
      options,
    );
    procs.push(api);
    return { api, base: `https://127.0.0.1:${port}` };
  };
  const call = (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  /** Invites an address over REST and answers the token of the link the mail holds. */
  const invite = async (base: string) => {
    const email = `traced-${rand()}@elsewhere.example`;
    expect((await call(base, 'POST', '/v1/users', { email })).status).toBe(202);
    const link = /\/invitations\/accept\?token=([A-Za-z0-9_-]{43})/.exec((await mail.waitFor(email, 10_000)).text);
    return link![1];
  };
  /** The POST that makes the event: accepting the invitation emits user.joined. */
  const accept = (base: string, token: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ token }).toString(),
    });

  it(
    'one trace from the POST that made an event, through the outbox and the relay, to the attempt and its POST to the receiver',
    async () => {
      const { api, base } = traced;

      const path = `/traced-${rand()}`;
      const made = await call(base, 'POST', '/v1/webhooks', { url: `https://127.0.0.1${path}`, events: ['user.joined'] });
      expect(made.status).toBe(201);
      const token = await invite(base);

      // The caller's own trace: the api continues it (W3C traceparent in), so its id is known here.
      const traceId = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      // Sent "not sampled": a caller cannot switch our tracing off.
      const accepted = await accept(base, token, { traceparent: `00-${traceId}-${callerSpan}-00` });
      expect(accepted.status).toBe(200);

      const [delivered] = await receiver.waitFor(path, 1, 20_000);
      // The outbound POST carries the trace on to the receiver too.
      expect(String(delivered.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

      const apiReport = await api.waitForSpan((s) => s.traceId === traceId && s.kind === SERVER, 'for the POST');
      // The job's consumer span ends last (after BullMQ marks the job completed), so it is what is waited for.
      const workerReport = await worker.waitForSpan((s) => s.traceId === traceId && s.scope === 'bullmq' && s.kind === CONSUMER, 'for the processed job');
      expect(apiReport).toMatchObject({ started: true, serviceName: 'integrations-api', sdkLoaded: true });
      expect(workerReport).toMatchObject({ started: true, serviceName: 'traces-spec-worker' });

      const spans = [...apiReport.spans, ...workerReport.spans].filter((s) => s.traceId === traceId);
      const one = (what: string, match: (s: PlainSpan) => boolean) => {
        const found = spans.filter(match);
        expect({ what, found: found.length > 0 }).toEqual({ what, found: true });
        return found[0];
      };
      // The HTTP request in (a child of the caller's span), a Postgres statement in it (the outbox row's insert).
      const http = one('HTTP server span', (s) => s.service === 'integrations-api' && s.kind === SERVER && s.parentSpanId === callerSpan);
      expect(http.attributes['http.method'] ?? http.attributes['http.request.method']).toBe('POST');
      expect({ name: http.name, route: http.attributes['http.route'] }).toEqual({ name: 'POST /invitations/accept', route: '/invitations/accept' });
      one(
        'outbox insert',
        (s) =>
          s.service === 'integrations-api' &&
          s.scope.includes('instrumentation-pg') &&
          /INSERT INTO outbox_events/.test(String(s.attributes['db.statement'] ?? s.attributes['db.query.text'])),
      );
      // In the worker: the relay, BullMQ's producer and consumer spans, the attempt, a Redis command, a Postgres statement and the POST out.
      const relay = one('outbox relay', (s) => s.name === 'outbox relay' && s.kind === PRODUCER);
      expect(relay.attributes['outbox.event']).toBe('user.joined');
      one('BullMQ add', (s) => s.scope === 'bullmq' && s.kind === PRODUCER);
      const consumer = one('BullMQ process', (s) => s.scope === 'bullmq' && s.kind === CONSUMER);
      const attempt = one('webhook attempt', (s) => s.name === 'webhook attempt');
      expect(attempt.attributes['webhook.outcome']).toBe('delivered');
      one('Redis command', (s) => s.service === 'traces-spec-worker' && s.scope.includes('instrumentation-ioredis'));
      one('Postgres in the attempt', (s) => s.scope.includes('instrumentation-pg') && s.parentSpanId === attempt.spanId);
      const post = one('outbound POST', (s) => s.scope.includes('instrumentation-undici') && s.kind === CLIENT);
      expect(post.attributes['http.request.method']).toBe('POST');
      expect(String(post.attributes['url.full'])).toBe(`https://127.0.0.1${path}`);

      // Parent, not link: the POST's ancestors are the attempt, the job, the relay, the request and the caller.
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const chain: string[] = [];
      for (let s: PlainSpan | undefined = post; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) {
        chain.push(s.spanId);
        if (s.parentSpanId && !byId.has(s.parentSpanId)) chain.push(s.parentSpanId);
      }
      expect(chain).toEqual(expect.arrayContaining([attempt.spanId, consumer.spanId, relay.spanId, http.spanId, callerSpan]));
      expect(chain.indexOf(attempt.spanId)).toBeLessThan(chain.indexOf(consumer.spanId));
      expect(chain.indexOf(consumer.spanId)).toBeLessThan(chain.indexOf(relay.spanId));
      expect(chain.indexOf(relay.spanId)).toBeLessThan(chain.indexOf(http.spanId));
      expect(chain[chain.length - 1]).toBe(callerSpan);
    },
    SLOW,
  );

  it(
    "a failed attempt's retry, queued later from the delivery row's stored context, is in the same trace, under the request",
    async () => {
      const { api, base } = traced;
      const path = `/retried-${rand()}`;
      let answered = 0;
      receiver.reply(path, () => ({ status: answered++ === 0 ? 503 : 200 }));
      expect((await call(base, 'POST', '/v1/webhooks', { url: `https://127.0.0.1${path}`, events: ['user.joined'] })).status).toBe(201);
      const token = await invite(base);
      const traceId = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      expect((await accept(base, token, { traceparent: `00-${traceId}-${callerSpan}-01` })).status).toBe(200);

      await receiver.waitFor(path, 2, 20_000);
      const apiReport = await api.waitForSpan((s) => s.traceId === traceId && s.kind === SERVER, 'for the POST');
      const isRetryJob = (s: PlainSpan) => s.traceId === traceId && s.scope === 'bullmq' && s.kind === CONSUMER && s.name.includes('webhook-retries');
      const workerReport = await worker.waitForSpan(isRetryJob, 'for the retry job');
      const spans = [...apiReport.spans, ...workerReport.spans].filter((s) => s.traceId === traceId);
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const ancestors = (span: PlainSpan) => {
        const chain: PlainSpan[] = [];
        for (let s: PlainSpan | undefined = byId.get(span.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? '')) chain.push(s);
        return chain;
      };
      const http = spans.find((s) => s.kind === SERVER && s.parentSpanId === callerSpan)!;
      expect(http).toBeDefined();

      // Both POSTs to this receiver path, each under its own attempt: the first failed, the retry delivered.
      const posts = spans.filter((s) => s.scope.includes('instrumentation-undici') && s.attributes['url.full'] === `https://127.0.0.1${path}`);
      const outcomes = posts.map((p) => ancestors(p).find((s) => s.name === 'webhook attempt')?.attributes['webhook.outcome']);
      expect(outcomes.sort()).toEqual(['delivered', 'failed']);
      const retried = posts.find((p) => ancestors(p).some((s) => s.name === 'webhook attempt' && s.attributes['webhook.outcome'] === 'delivered'))!;
      const chain = ancestors(retried);
      // attempt → the retry queue's job → its add, under the context stored with the delivery (the request's) → the request → the caller's span.
      expect(chain[0].name).toBe('webhook attempt');
      expect(isRetryJob(chain[1])).toBe(true);
      expect({ scope: chain[2].scope, kind: chain[2].kind }).toEqual({ scope: 'bullmq', kind: PRODUCER });
      expect(chain.map((s) => s.spanId)).toContain(http.spanId);
      expect(chain.some((s) => s.name === 'outbox relay')).toBe(false);
      expect(chain[chain.length - 1].parentSpanId).toBe(callerSpan);
    },
    SLOW,
  );

  it(
    'with OTEL_EXPORTER_OTLP_ENDPOINT unset no SDK is started nor loaded, and the outbox row carries no trace context',
    async () => {
      const { api, base } = untraced;
      const token = await invite(base);
      const traceId = randomBytes(16).toString('hex');
      expect((await accept(base, token, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` })).status).toBe(200);
      expect(await api.report()).toEqual({ started: false, serviceName: null, sdkLoaded: false, spans: [] });

      const rows = await sql(`SELECT traceparent, tracestate FROM outbox_events WHERE organisation_id = $1 AND event = 'user.joined' ORDER BY created_at`, [
        organisationId,
      ]);
      // The earlier tests' events carried their trace; this one, made with tracing off, carries none.
      expect(rows.length).toBeGreaterThan(1);
      expect(rows.slice(0, -1)).toEqual(
        rows.slice(0, -1).map(() => ({ traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/), tracestate: null })),
      );
      expect(rows[rows.length - 1]).toEqual({ traceparent: null, tracestate: null });
    },
    SLOW,
  );

  it(
    'with the endpoint set and no hook, the built api exports its spans over OTLP/HTTP to <endpoint>/v1/traces, and flushes them when it stops',
    async () => {
      const { api, base } = exporting;
      const traceId = randomBytes(16).toString('hex');
      const res = await fetch(`${base}/v1/me`, {
        headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      });
      expect(res.status).toBe(200);
      // Spans go in batches (every 5 s by default); stopping the process flushes what is left.
      await api.stop();
      expect(api.child.exitCode).toBe(0);
      const spans = collector.posts.flatMap((p) =>
        (p.body?.resourceSpans ?? []).flatMap((r: any) =>
          r.scopeSpans.flatMap((ss: any) =>
            ss.spans.map((span: any) => ({
              path: p.path,
              contentType: p.contentType,
              service: r.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue,
              scope: ss.scope.name,
              name: span.name,
              traceId: span.traceId,
            })),
          ),
        ),
      );
      expect(spans.filter((s) => s.traceId === traceId && s.scope.includes('instrumentation-http'))).toEqual([
        {
          path: '/otlp/v1/traces',
          contentType: 'application/json',
          service: 'integrations-api',
          scope: '@opentelemetry/instrumentation-http',
          name: 'GET /v1/me',
          traceId,
        },
      ]);
    },
    SLOW,
  );
});
