import { GAUGES, METRICS } from './catalogue';
import { COLLECT_TIMEOUT_MS, Metrics } from './metrics';

const valueOf = async (m: Metrics, name: string, labels: Record<string, string> = {}): Promise<number | undefined> => {
  const metric = m.registry.getSingleMetric(name);
  if (!metric) return undefined;
  const { values } = await metric.get();
  return values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
};

describe('Metrics', () => {
  afterEach(() => jest.useRealTimers());

  it('makes a metric of the catalogue once, on first use, in its own registry', () => {
    const a = new Metrics();
    const b = new Metrics();
    expect(a.registry.getSingleMetric(METRICS.refusedKeys.name)).toBeUndefined();
    expect(a.counter(METRICS.refusedKeys)).toBe(a.counter(METRICS.refusedKeys));
    expect(a.counter(METRICS.refusedKeys)).not.toBe(b.counter(METRICS.refusedKeys));
    expect(a.registry.getSingleMetric(METRICS.refusedKeys.name)).toBeDefined();
  });

  it("renders the application's metrics and the process's", async () => {
    const m = new Metrics();
    m.counter(METRICS.refusedKeys).inc({ reason: 'missing' });
    const text = await m.render();
    expect(text).toContain('integrations_refused_keys_total{reason="missing"} 1');
    expect(text).toContain('# TYPE process_cpu_seconds_total counter');
    expect(text).not.toContain('nodejs_active_handles_total');
  });

  it('reads scrape-time gauges afresh at each scrape, dropping series that are gone', async () => {
    const m = new Metrics();
    let queues = ['a', 'b'];
    m.collectAtScrape('queues', [GAUGES.queueOldestWaitingAge], async () =>
      queues.map((q) => ({ gauge: GAUGES.queueOldestWaitingAge, labels: { queue: q }, value: 3 })),
    );
    let text = await m.render();
    expect(text).toContain('integrations_queue_oldest_waiting_age_seconds{queue="a"} 3');
    expect(text).toContain('integrations_metrics_collector_up{collector="queues"} 1');
    queues = ['b'];
    text = await m.render();
    expect(text).not.toContain('queue="a"');
    expect(text).toContain('integrations_queue_oldest_waiting_age_seconds{queue="b"} 3');
  });

  it('a collector that fails leaves its gauges out (never a stale value) and says so', async () => {
    const m = new Metrics();
    let fail = false;
    m.collectAtScrape('outbox', [GAUGES.outboxBacklog], async () => {
      if (fail) throw new Error('Postgres is away');
      return [{ gauge: GAUGES.outboxBacklog, value: 7 }];
    });
    expect(await m.render()).toContain('integrations_outbox_backlog 7');
    fail = true;
    const text = await m.render();
    expect(text).not.toContain('integrations_outbox_backlog 7');
    expect(await valueOf(m, GAUGES.collectorUp.name, { collector: 'outbox' })).toBe(0);
  });

  it('a collector that does not answer is given up after COLLECT_TIMEOUT_MS, and is not read twice at once', async () => {
    jest.useFakeTimers();
    const m = new Metrics();
    let reads = 0;
    let answer: (v: never[]) => void = () => undefined;
    m.collectAtScrape('queues', [GAUGES.queueJobs], () => {
      reads++;
      // The first read hangs (Redis away) until answered; later ones answer at once.
      return reads === 1 ? new Promise((resolve) => (answer = resolve)) : Promise.resolve([]);
    });
    const first = m.render();
    const second = m.render();
    await jest.advanceTimersByTimeAsync(COLLECT_TIMEOUT_MS + 1);
    await Promise.all([first, second]);
    expect(reads).toBe(1);
    expect(await valueOf(m, GAUGES.collectorUp.name, { collector: 'queues' })).toBe(0);
    answer([]);
    await jest.advanceTimersByTimeAsync(1);
    await m.render();
    expect(reads).toBe(2);
    expect(await valueOf(m, GAUGES.collectorUp.name, { collector: 'queues' })).toBe(1);
  });

  it('every metric of the catalogue is named as Prometheus wants: prefixed, counters in _total, durations in seconds', () => {
    for (const d of Object.values(METRICS)) {
      expect(d.name).toMatch(/^integrations_[a-z_]+$/);
      if ('buckets' in d) expect(d.name).toMatch(/_seconds$/);
      else expect(d.name).toMatch(/_total$/);
    }
    for (const d of Object.values(GAUGES)) expect(d.name).not.toMatch(/_total$/);
  });
});
