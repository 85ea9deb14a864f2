import { Injectable, Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, LabelValues, Registry } from 'prom-client';
import { GAUGES, HistogramDef, MetricDef } from './catalogue';

/** A scrape waits this long for a collector (Redis or Postgres away must not hang Prometheus). */
export const COLLECT_TIMEOUT_MS = 2000;

/** One value of a scrape-time gauge. */
export interface Sample<L extends string = string> {
  gauge: MetricDef<L>;
  labels?: LabelValues<L>;
  value: number;
}

interface Collector {
  name: string;
  gauges: MetricDef[];
  read: () => Promise<Sample[]>;
  /** The read under way, shared by scrapes that overlap it (a slow source is never read twice at once). */
  inFlight?: Promise<Sample[]>;
}

let processRegistry: Registry | undefined;

/**
 * prom-client's gauges named like counters (`…_total`), which `promtool check metrics` refuses;
 * the same numbers by type are in `nodejs_active_handles`, `nodejs_active_requests`, `nodejs_active_resources`.
 */
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * Node's and the process's own metrics (CPU, memory, event-loop delay, GC, handles), once per
 * process whatever the number of applications in it, and only from the first scrape on: nothing
 * is sampled for a process nobody scrapes.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    for (const name of MISNAMED_DEFAULTS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/**
 * The application's metrics: one registry per application (the api and the worker each have
 * theirs, also when a test runs both in one process). Metrics of the catalogue are made on first
 * use, so each process exports what it records. Scrape-time gauges are read by collectors, each
 * bounded by COLLECT_TIMEOUT_MS; a collector that fails or is too slow leaves its gauges out of that
 * scrape (never a stale value) and says so in `integrations_metrics_collector_up`.
 */
@Injectable()
export class Metrics {
  private readonly logger = new Logger(Metrics.name);
  readonly registry = new Registry();
  private readonly made = new Map<string, Counter | Gauge | Histogram>();
  private readonly collectors: Collector[] = [];

  counter<L extends string>(d: MetricDef<L>): Counter<L> {
    return this.make(d, () => new Counter<L>({ name: d.name, help: d.help, labelNames: d.labelNames, registers: [this.registry] }));
  }

  histogram<L extends string>(d: HistogramDef<L>): Histogram<L> {
    return this.make(d, () => new Histogram<L>({ name: d.name, help: d.help, labelNames: d.labelNames, buckets: d.buckets, registers: [this.registry] }));
  }

  gauge<L extends string>(d: MetricDef<L>): Gauge<L> {
    return this.make(d, () => new Gauge<L>({ name: d.name, help: d.help, labelNames: d.labelNames, registers: [this.registry] }));
  }

  /** Adds a collector whose `read` answers every value of `gauges` afresh at each scrape. */
  collectAtScrape(name: string, gauges: MetricDef[], read: () => Promise<Sample[]>): void {
    for (const g of gauges) this.gauge(g);
    this.gauge(GAUGES.collectorUp);
    this.collectors.push({ name, gauges, read });
  }

  /** The Prometheus text exposition of this application and of the process. */
  async render(): Promise<string> {
    await Promise.all(this.collectors.map((c) => this.collect(c)));
    const [app, proc] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${app}${app.endsWith('\n') || app === '' ? '' : '\n'}${proc}`;
  }

  get contentType(): string {
    return Registry.PROMETHEUS_CONTENT_TYPE;
  }

  private async collect(c: Collector): Promise<void> {
    c.inFlight ??= c.read().finally(() => (c.inFlight = undefined));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${COLLECT_TIMEOUT_MS} ms`)), COLLECT_TIMEOUT_MS);
    });
    let samples: Sample[] | undefined;
    try {
      samples = await Promise.race([c.inFlight, timeout]);
    } catch (err) {
      this.logger.warn(`metrics: the ${c.name} collector failed: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    // The in-flight read may still reject after a timeout: nobody awaits it then.
    c.inFlight?.catch(() => undefined);
    for (const g of c.gauges) this.gauge(g).reset();
    for (const s of samples ?? []) this.gauge(s.gauge).set(s.labels ?? {}, s.value);
    this.gauge(GAUGES.collectorUp).set({ collector: c.name }, samples ? 1 : 0);
  }

  private make<T extends Counter | Gauge | Histogram>(d: MetricDef, create: () => T): T {
    let m = this.made.get(d.name);
    if (!m) {
      m = create();
      this.made.set(d.name, m);
    }
    return m as T;
  }
}
