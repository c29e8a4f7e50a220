/** One sample line of the Prometheus text exposition format. */
export interface ExpositionSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition text; throws on a line that is neither a comment nor a sample. */
export function parseExposition(text: string): ExpositionSample[] {
  const samples: ExpositionSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of metric `name` (exactly that sample name, e.g. `x_bucket`). */
export function samplesOf(samples: readonly ExpositionSample[], name: string): ExpositionSample[] {
  return samples.filter((sample) => sample.name === name);
}

/** Each sample of `name` as `'label=value,...' → value`, labels sorted, for exact comparisons. */
export function seriesOf(samples: readonly ExpositionSample[], name: string): Record<string, number> {
  const series: Record<string, number> = {};
  for (const sample of samplesOf(samples, name)) {
    const key = Object.keys(sample.labels)
      .sort()
      .map((label) => `${label}=${sample.labels[label]}`)
      .join(',');
    series[key] = sample.value;
  }
  return series;
}

/** The value of the one sample of `name` with exactly `labels`; throws when absent. */
export function valueOf(samples: readonly ExpositionSample[], name: string, labels: Record<string, string> = {}): number {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const found = samplesOf(samples, name).find((sample) => JSON.stringify(Object.entries(sample.labels).sort()) === wanted);
  if (!found) throw new Error(`no sample ${name} ${wanted}`);
  return found.value;
}
