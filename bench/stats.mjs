// Statistics shared by the benchmarks.

/** The median of `values` (the mean of the two middle values for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Interquartile range relative to the median, as a rough noise figure. */
export function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return (q(0.75) - q(0.25)) / median(values);
}

/** Median over the rounds of x's batch / y's batch in the same round: robust to drift of a busy machine. */
export const pairedRatio = (x, y, field) => median(x.samples.map((s, round) => s[field] / y.samples[round][field]));

/** Median wall and CPU time of a contestant's batches, and the CPU spread. */
export const summary = (samples) => ({
  wall: median(samples.map((s) => s.wall)),
  cpu: median(samples.map((s) => s.cpu)),
  iqr: spread(samples.map((s) => s.cpu)),
});
