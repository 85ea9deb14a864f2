import { getQueueToken } from '@nestjs/bullmq';
import { AppConfig } from '@kernel/config';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { QUEUES } from '@kernel/queue';
import { Queue } from 'bullmq';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GAUGES, METRICS } from '@kernel/metrics';
import { HealthServer } from '../apps/worker/src/health/health-server';
import { MetricsServer } from '../apps/api/src/metrics/metrics-server';
import { makeTenant, startApi, Tenant } from './support/api';
import { parseProm, promtool, PromSample, promValue } from './support/prom-text';
import { until } from './support/until';
import { startWebhookStand, WebhookStand } from './support/webhook-stand';
import { startWebhookWorker } from './support/webhook-worker';

const ROOT = join(__dirname, '..');
const SLOW = 60_000;
const rand = () => Math.random().toString(36).slice(2, 10);

/** Every name this service exports, with the series a histogram adds. */
const EXPORTED = new Set(
  [...Object.values(METRICS), ...Object.values(GAUGES)].flatMap((m) => ('buckets' in m ? ['_bucket', '_count', '_sum'].map((x) => m.name + x) : [m.name])),
);
const ourNames = (text: string) => [...new Set(text.match(/\bintegrations_[a-z_]+/g) ?? [])];

describe('the alert rules (docker/prometheus/alerts.yml) and the Grafana dashboard (docker/grafana/integrations.json)', () => {
  it('the alert rules pass promtool check rules', () => {
    const { status, output } = promtool(['check', 'rules', join(ROOT, 'docker/prometheus/alerts.yml')]);
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
    expect(status).toBe(0);
  });

  it('the alert rules fire as meant on made-up series (promtool test rules)', () => {
    const { status, output } = promtool(['test', 'rules', join(ROOT, 'docker/prometheus/alerts.test.yml')]);
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
  });

  it("the compose example's scrape configuration passes promtool check config (it loads the alert rules)", () => {
    const { status, output } = promtool(['check', 'config', join(ROOT, 'docker/prometheus/prometheus.yml')]);
    expect(output).toContain('is valid prometheus config file syntax');
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
    expect(status).toBe(0);
  });

  it('the rules and the dashboard use only metrics the service exports', () => {
    const used = [
      readFileSync(join(ROOT, 'docker/prometheus/alerts.yml'), 'utf8'),
      readFileSync(join(ROOT, 'docker/grafana/integrations.json'), 'utf8'),
    ].flatMap(ourNames);
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((n) => !EXPORTED.has(n))).toEqual([]);
  });

  it('the dashboard is a Grafana dashboard whose every query is PromQL that promtool parses', () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'docker/grafana/integrations.json'), 'utf8'));
    expect(dashboard).toMatchObject({ title: 'Integrations API', uid: 'integrations-api', schemaVersion: expect.any(Number) });
    const panels = dashboard.panels as Array<{ id: number; type: string; gridPos: object; targets?: Array<{ expr: string }> }>;
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const exprs = panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(15);
    // Grafana's variables, as Grafana fills them in, so that promtool parses each query as a recording rule.
    const filled = exprs.map((e) => e.replaceAll('$__rate_interval', '5m').replace(/\$(job|route)\b/g, '.*'));
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
    try {
      const rules = filled.map((e, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(e)}`).join('\n');
      writeFileSync(join(dir, 'queries.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules}\n`);
      const { status, output } = promtool(['check', 'rules', join(dir, 'queries.yml')]);
      expect(output).toContain(`SUCCESS: ${exprs.length} rules found`);
      expect(status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('metrics: what Prometheus scrapes from the api and the worker', () => {
  let stand: WebhookStand;
  let t: Tenant;

  beforeAll(async () => {
    stand = await startWebhookStand({});
    t = await makeTenant(stand.api.app);
  }, SLOW);
  afterAll(() => stand?.close(), SLOW);

  const apiMetricsUrl = () => `http://127.0.0.1:${stand.api.app.get(MetricsServer).port}/metrics`;
  const workerUrl = (path: string) => `http://127.0.0.1:${stand.worker.get(HealthServer).port}${path}`;
  const scrape = async (url: string): Promise<{ text: string; samples: PromSample[] }> => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    return { text, samples: parseProm(text) };
  };
  const api = async () => (await scrape(apiMetricsUrl())).samples;
  const worker = async () => (await scrape(workerUrl('/metrics'))).samples;

  it('a refused key is counted by its reason, and the call by its route template and status', async () => {
    const before = await api();
    expect((await stand.api.http().get('/v1/me').set({ Authorization: 'Bearer svc_not_a_key_at_all' })).status).toBe(401);
    expect((await stand.api.http().get('/v1/me').set({ Authorization: 'Bearer svc_not_a_key_at_all' })).status).toBe(401);
    expect((await stand.api.http().get('/v1/me')).status).toBe(401);
    expect((await stand.api.http().get('/v1/me').set(t.auth)).status).toBe(200);
    const after = await api();
    const delta = (name: string, labels: Record<string, string>) => promValue(after, name, labels) - promValue(before, name, labels);
    expect(delta('integrations_refused_keys_total', { reason: 'unknown' })).toBe(2);
    expect(delta('integrations_refused_keys_total', { reason: 'missing' })).toBe(1);
    expect(delta('integrations_refused_keys_total', { reason: 'revoked' })).toBe(0);
    expect(delta('integrations_http_request_duration_seconds_count', { method: 'GET', route: '/v1/me', status: '401' })).toBe(3);
    expect(delta('integrations_http_request_duration_seconds_count', { method: 'GET', route: '/v1/me', status: '200' })).toBe(1);
  });

  it('a scope the key lacks is counted as scope_missing', async () => {
    const narrow = await makeTenant(stand.api.app, ['cases:read']);
    const before = await api();
    expect((await stand.api.http().get('/v1/webhooks').set(narrow.auth)).status).toBe(403);
    expect(
      promValue(await api(), 'integrations_refused_keys_total', { reason: 'scope_missing' }) -
        promValue(before, 'integrations_refused_keys_total', { reason: 'scope_missing' }),
    ).toBe(1);
  });

  it('routes are labelled by template, never by a raw path or id; a path no route serves is "unmatched"', async () => {
    const hook = await stand.hook(t, 'labels');
    expect((await stand.api.http().get(`/v1/webhooks/${hook.id}`).set(t.auth)).status).toBe(200);
    expect((await stand.api.http().get(`/v1/webhooks/${hook.id}`)).status).toBe(401); // refused before routing: still the template
    expect((await stand.api.http().get(`/v1/no-such-thing/${rand()}`).set(t.auth)).status).toBe(404);
    const { text, samples } = await scrape(apiMetricsUrl());
    expect(promValue(samples, 'integrations_http_request_duration_seconds_count', { route: '/v1/webhooks/:id', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(promValue(samples, 'integrations_http_request_duration_seconds_count', { route: '/v1/webhooks/:id', status: '401' })).toBeGreaterThanOrEqual(1);
    expect(promValue(samples, 'integrations_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    const routes = new Set(samples.filter((x) => x.labels.route !== undefined).map((x) => x.labels.route));
    expect([...routes].filter((r) => r !== 'unmatched' && !r.startsWith('/'))).toEqual([]);
    expect([...routes].filter((r) => r.split('/').includes(hook.id))).toEqual([]);
    expect(text).not.toContain(`/${hook.id}`);
    expect(text).not.toContain('no-such-thing');
  });

  it("a call refused by its connection's rate limit is counted by policy", async () => {
    const small = await startApi({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2' });
    try {
      const own = await makeTenant(small.app);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await small.http().get('/v1/me').set(own.auth)).status);
      expect(statuses).toEqual([200, 200, 429]);
      const { samples } = await scrape(`http://127.0.0.1:${small.app.get(MetricsServer).port}/metrics`);
      expect(promValue(samples, 'integrations_rate_limited_total', { policy: 'rest' })).toBe(1);
      expect(promValue(samples, 'integrations_rate_limited_total', { policy: 'scim' })).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('an Idempotency-Key replay is counted', async () => {
    const before = await api();
    const key = `metrics-${rand()}`;
    const body = { external_ref: `M-${rand()}` };
    expect((await stand.api.http().post('/v1/cases').set(t.auth).set('Idempotency-Key', key).send(body)).status).toBe(201);
    const again = await stand.api.http().post('/v1/cases').set(t.auth).set('Idempotency-Key', key).send(body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const after = await api();
    const delta = (outcome: string) =>
      promValue(after, 'integrations_idempotency_requests_total', { outcome }) - promValue(before, 'integrations_idempotency_requests_total', { outcome });
    expect([delta('first'), delta('replayed'), delta('reused')]).toEqual([1, 1, 0]);
  });

  it('SCIM operations are counted by resource, operation and outcome', async () => {
    const before = await api();
    const scim = { ...t.auth, 'Content-Type': 'application/scim+json' };
    const userName = `metrics-${rand()}@example.com`;
    const made = await stand.api
      .http()
      .post('/scim/v2/Users')
      .set(scim)
      .send({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName, displayName: 'Mia Metrics' });
    expect(made.status).toBe(201);
    expect(
      (
        await stand.api
          .http()
          .get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)
          .set(scim)
      ).status,
    ).toBe(200);
    expect((await stand.api.http().get(`/scim/v2/Users/${rand()}`).set(scim)).status).toBe(404);
    const after = await api();
    const delta = (labels: Record<string, string>) =>
      promValue(after, 'integrations_scim_operations_total', labels) - promValue(before, 'integrations_scim_operations_total', labels);
    expect(delta({ resource: 'Users', operation: 'create', outcome: 'success' })).toBe(1);
    expect(delta({ resource: 'Users', operation: 'list', outcome: 'success' })).toBe(1);
    expect(delta({ resource: 'Users', operation: 'get', outcome: 'client_error' })).toBe(1);
  });

  it('deliveries and attempts are counted by event and outcome, the relay by events, with attempt durations', async () => {
    const own = await makeTenant(stand.api.app); // its only webhooks are these two
    const ok = await stand.hook(own, 'ok', ['conversation.ended']);
    const bad = await stand.hook(own, 'bad', ['conversation.ended']);
    stand.receiver.reply(bad.path, { status: 500 });
    const before = await worker();
    const c = (await stand.api.app.get(CasesService).open(own.organisationId, { externalRef: `REF-${rand()}` })).case;
    const ingest = stand.api.app.get(ConversationIngestService);
    const conv = await ingest.start(c.id, 'en', 'es');
    await ingest.appendTurn(conv.id, { speaker: 'patient', language: 'en', text: 'hello', translation: 'hola' });
    await ingest.end(conv.id);
    await stand.receiver.waitFor(ok.path);
    await stand.receiver.waitFor(bad.path);
    const delta = (s: PromSample[], name: string, labels: Record<string, string>) => promValue(s, name, labels) - promValue(before, name, labels);
    const after = await until(async () => {
      const s = await worker();
      return delta(s, 'integrations_webhook_attempts_total', { event: 'conversation.ended' }) >= 2 && s;
    }, 'both attempts counted');
    expect(delta(after, 'integrations_webhook_attempts_total', { event: 'conversation.ended', outcome: 'success' })).toBe(1);
    expect(delta(after, 'integrations_webhook_attempts_total', { event: 'conversation.ended', outcome: 'http_error' })).toBe(1);
    expect(delta(after, 'integrations_webhook_deliveries_total', { event: 'conversation.ended', outcome: 'delivered' })).toBe(1);
    expect(delta(after, 'integrations_webhook_attempt_duration_seconds_count', {})).toBe(2);
    expect(delta(after, 'integrations_outbox_relayed_events_total', {})).toBeGreaterThanOrEqual(1);
    // The failed one then waits for its retry (queued once its attempt is recorded): the retries queue holds it, delayed.
    await until(
      async () => promValue(await worker(), 'integrations_queue_jobs', { queue: QUEUES.webhookRetries, state: 'delayed' }) >= 1,
      'the retry job counted',
    );
  });

  it('the worker reads queue depth, the oldest waiting job and the outbox at scrape time', async () => {
    const queue = stand.worker.get<Queue>(getQueueToken(QUEUES.translations));
    await queue.pause();
    const job = await queue.add('metrics-probe', { documentId: 'none' });
    try {
      await new Promise((r) => setTimeout(r, 50));
      const s = await worker();
      expect(promValue(s, 'integrations_queue_jobs', { queue: QUEUES.translations, state: 'waiting' })).toBe(1);
      expect(promValue(s, 'integrations_queue_oldest_waiting_age_seconds', { queue: QUEUES.translations })).toBeGreaterThan(0);
      expect(promValue(s, 'integrations_queue_oldest_waiting_age_seconds', { queue: QUEUES.maintenance })).toBe(0);
      for (const q of Object.values(QUEUES)) expect(s.some((x) => x.name === 'integrations_queue_jobs' && x.labels.queue === q)).toBe(true);
      expect(s.find((x) => x.name === 'integrations_outbox_backlog')).toBeDefined();
      expect(s.find((x) => x.name === 'integrations_outbox_relay_lag_seconds')).toBeDefined();
      expect(promValue(s, 'integrations_metrics_collector_up', { collector: 'queues' })).toBe(1);
      expect(promValue(s, 'integrations_metrics_collector_up', { collector: 'outbox' })).toBe(1);
    } finally {
      await job.remove();
      await queue.resume();
    }
  });

  it('promtool check metrics accepts what the api and the worker serve after that traffic', async () => {
    for (const url of [apiMetricsUrl(), workerUrl('/metrics')]) {
      const { text } = await scrape(url);
      expect(text).toContain('process_cpu_seconds_total');
      const { status, output } = promtool(['check', 'metrics'], text);
      expect(output).toBe('');
      expect(status).toBe(0);
    }
  });

  it("the worker's port keeps its health probes; the api's metrics port serves nothing else", async () => {
    expect((await fetch(workerUrl('/health/live'))).status).toBe(200);
    const ready = await fetch(workerUrl('/health/ready'));
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok' }]);
    expect((await fetch(workerUrl('/nothing'))).status).toBe(404);
    expect((await fetch(apiMetricsUrl().replace('/metrics', '/health/live'))).status).toBe(404);
  });

  it(
    'METRICS_ENABLED=false: the api opens no metrics port and the worker answers /metrics 404',
    async () => {
      const quiet = await startApi({ METRICS_ENABLED: 'false' });
      const quietWorker = await startWebhookWorker(AppConfig.fromEnv({ METRICS_ENABLED: 'false', WORKER_HEALTH_PORT: '0' }));
      try {
        expect(quiet.app.get(MetricsServer).port).toBeUndefined();
        const port = quietWorker.get(HealthServer).port;
        expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
        expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
      } finally {
        await quietWorker.close();
        await quiet.close();
      }
    },
    SLOW,
  );
});

describe('METRICS_HOST: the address of the private ports', () => {
  /** Whether a plain GET reaches `url` (false when nothing listens at that address). */
  const reaches = (url: string) =>
    fetch(url).then(
      (res) => res.status,
      () => 'refused',
    );

  it(
    "the api's metrics port and the worker's health port listen on METRICS_HOST, not on HOST",
    async () => {
      // 127.0.0.2 is another loopback address: HOST (127.0.0.1) would not answer on it.
      const env = { HOST: '127.0.0.1', METRICS_HOST: '127.0.0.2', WORKER_HEALTH_PORT: '0' };
      const api = await startApi(env);
      const worker = await startWebhookWorker(AppConfig.fromEnv(env));
      try {
        const metricsPort = api.app.get(MetricsServer).port;
        const healthPort = worker.get(HealthServer).port;
        expect(await reaches(`http://127.0.0.2:${metricsPort}/metrics`)).toBe(200);
        expect(await reaches(`http://127.0.0.1:${metricsPort}/metrics`)).toBe('refused');
        expect(await reaches(`http://127.0.0.2:${healthPort}/health/live`)).toBe(200);
        expect(await reaches(`http://127.0.0.2:${healthPort}/metrics`)).toBe(200);
        expect(await reaches(`http://127.0.0.1:${healthPort}/health/live`)).toBe('refused');
      } finally {
        await worker.close();
        await api.close();
      }
    },
    SLOW,
  );

  it(
    'unset, they listen on HOST',
    async () => {
      const env = { HOST: '127.0.0.2', WORKER_HEALTH_PORT: '0' };
      const api = await startApi(env);
      const worker = await startWebhookWorker(AppConfig.fromEnv(env));
      try {
        const metricsPort = api.app.get(MetricsServer).port;
        const healthPort = worker.get(HealthServer).port;
        expect(await reaches(`http://127.0.0.2:${metricsPort}/metrics`)).toBe(200);
        expect(await reaches(`http://127.0.0.1:${metricsPort}/metrics`)).toBe('refused');
        expect(await reaches(`http://127.0.0.2:${healthPort}/health/live`)).toBe(200);
        expect(await reaches(`http://127.0.0.1:${healthPort}/health/live`)).toBe('refused');
      } finally {
        await worker.close();
        await api.close();
      }
    },
    SLOW,
  );
});
