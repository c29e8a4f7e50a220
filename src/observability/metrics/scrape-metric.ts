import type { Counter, Gauge, Registry } from 'prom-client';
import { promClient } from './prom-client-loader';

/** One sample of a scrape-time metric: its labels and value. */
export type Sample<L extends string> = readonly [labels: Partial<Record<L, string>>, value: number];

/** What a scrape-time metric reads: its samples now, or `undefined` to keep the last ones (source closed). */
export type SampleReader<L extends string> = () => Iterable<Sample<L>> | undefined;

interface ScrapeMetricConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
  readonly read: SampleReader<L>;
}

/**
 * A gauge whose samples are read from a component's status at scrape time (never maintained by
 * events, so it cannot drift). A read that throws keeps the previous samples: a scrape never fails
 * because one component is closed.
 */
export function scrapeGauge<L extends string>(registry: Registry, config: ScrapeMetricConfig<L>): Gauge<L> {
  return new (promClient().Gauge<L>)({
    ...described(registry, config),
    collect() {
      refresh(this, config.read, (labels, value) => this.set(labels, value));
    },
  });
}

/**
 * A counter mirroring a monotonic count a component keeps (the trace store's counters): each scrape
 * sets it to the component's value, which prom-client's `Counter` allows only as reset + increment.
 */
export function scrapeCounter<L extends string>(registry: Registry, config: ScrapeMetricConfig<L>): Counter<L> {
  return new (promClient().Counter<L>)({
    ...described(registry, config),
    collect() {
      refresh(this, config.read, (labels, value) => this.inc(labels, value));
    },
  });
}

function described<L extends string>(registry: Registry, config: ScrapeMetricConfig<L>) {
  return { name: config.name, help: config.help, labelNames: config.labelNames ?? [], registers: [registry] };
}

/** Replaces the metric's samples by what `read` gives now; keeps them when the read fails. */
function refresh<L extends string>(metric: { reset(): void }, read: SampleReader<L>, write: (labels: Partial<Record<L, string>>, value: number) => void): void {
  const samples = readSafely(read);
  if (samples === undefined) return;
  metric.reset();
  for (const [labels, value] of samples) write(labels, value);
}

function readSafely<L extends string>(read: SampleReader<L>): Array<Sample<L>> | undefined {
  try {
    const samples = read();
    return samples === undefined ? undefined : [...samples].filter(([, value]) => Number.isFinite(value) && value >= 0);
  } catch {
    return undefined;
  }
}
