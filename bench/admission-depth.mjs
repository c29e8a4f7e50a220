// Per-operation cost of the AdmissionController at a queue depth: part (c) of the admission benchmark
// (spec 01 §10) and part (2) of the flow-control one (spec 09), which runs the same method with tenants.
import { performance } from 'node:perf_hooks';
import { median } from './stats.mjs';

export const AGENTS = 1_000;
export const agentIds = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
export const GLOBAL_LIMIT = 256;
export const AGENT_LIMIT = 4;
const OPS = 10_000; // operations per measurement
const PAIR_BATCH = 100; // submit+cancel pairs per timed batch
const RELEASE_BATCH = 16; // releases timed back to back before the queue is topped up again (depth 100 dips to 84)

export const DEPTH_METRICS = ['own', 'random', 'release', 'acquire'];
export const DEPTH_LABELS = ['submit+cancel own', 'submit+cancel rnd', 'release→grant', 'acquire (queued)'];

/**
 * Times operations in batches; returns ns/op as the mean over all batches (every GC pause and
 * preemption included) and as the median batch (what the data structures cost).
 */
export class BatchTimer {
  constructor() {
    this.batches = [];
    this.totalMs = 0;
    this.ops = 0;
  }

  add(ms, ops) {
    this.batches.push(ms / ops);
    this.totalMs += ms;
    this.ops += ops;
  }

  result() {
    return { mean: (this.totalMs * 1e6) / this.ops, median: median(this.batches) * 1e6 };
  }
}

export const settle = () => new Promise((resolve) => setImmediate(resolve));

/** `count` indices below `below` from a fixed-seed PRNG (mulberry32): the same on every run. */
export function randomIndices(count, below) {
  let seed = 0x9e3779b9;
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = (((t ^ (t >>> 14)) >>> 0) % below) >>> 0;
  }
  return out;
}

/**
 * What the requests of a depth measurement ask for. The i-th request goes to agent `i % AGENTS`;
 * `optsOf(i)` gives its options (undefined: none), `tenantOf(i)` its tenant's index (-1: none).
 * `config` is added to the controller's; `tenants` and `tenantLimit` size the probe.
 */
export const twoScopes = Object.freeze({ config: {}, optsOf: () => undefined, tenantOf: () => -1, tenants: 0, tenantLimit: Infinity });

/**
 * Counts the permits the benchmark holds, globally, per agent and per tenant, and throws as soon as
 * a grant takes a count over its limit, so a limiter that stopped enforcing one cannot look fast.
 */
class HeldProbe {
  constructor(workload) {
    this.workload = workload;
    this.global = 0;
    this.perAgent = new Int32Array(AGENTS);
    this.perTenant = new Int32Array(workload.tenants);
    this.peaks = { global: 0, agent: 0, tenant: 0 };
  }

  granted(i) {
    const tenant = this.workload.tenantOf(i);
    const global = ++this.global;
    const agent = ++this.perAgent[i % AGENTS];
    const inTenant = tenant < 0 ? 0 : ++this.perTenant[tenant];
    if (global > this.peaks.global) this.peaks.global = global;
    if (agent > this.peaks.agent) this.peaks.agent = agent;
    if (inTenant > this.peaks.tenant) this.peaks.tenant = inTenant;
    if (global > GLOBAL_LIMIT || agent > AGENT_LIMIT || inTenant > this.workload.tenantLimit) {
      throw new Error(`limit exceeded at request ${i}: global ${global}, agent ${agent}, tenant ${inTenant}`);
    }
  }

  released(i) {
    const tenant = this.workload.tenantOf(i);
    this.global--;
    this.perAgent[i % AGENTS]--;
    if (tenant >= 0) this.perTenant[tenant]--;
  }
}

/** A controller with the global limit saturated, sized for `level` queued requests. */
function saturated(Controller, level, finiteDeadlines, workload) {
  return new Controller({
    globalLimit: GLOBAL_LIMIT,
    defaultAgentLimit: AGENT_LIMIT,
    overflow: 'queue',
    maxQueue: level + 1,
    defaultQueueTimeoutMs: finiteDeadlines ? 600_000 : 'infinity',
    ...workload.config,
  });
}

/**
 * Submit+cancel pairs that keep the depth at `level`: `own` cancels the request just submitted (the
 * tail of its flow, still in cache); `random` cancels a random queued request instead.
 */
export function submitCancelAt(Controller, level, finiteDeadlines, workload) {
  const controller = saturated(Controller, level, finiteDeadlines, workload);
  const { optsOf } = workload;
  let next = 0;
  for (let i = 0; i < GLOBAL_LIMIT; i++, next++) {
    if (controller.submit(agentIds[next % AGENTS], optsOf(next)).status !== 'granted') throw new Error(`request ${next} not granted while filling`);
  }
  const live = new Array(level);
  for (let i = 0; i < level; i++, next++) live[i] = controller.submit(agentIds[next % AGENTS], optsOf(next)).requestRef;
  const victims = randomIndices(OPS, level);
  return {
    controller,
    measure() {
      const own = new BatchTimer();
      const random = new BatchTimer();
      for (let done = 0; done < OPS; done += PAIR_BATCH) {
        let t0 = performance.now();
        for (let i = done; i < done + PAIR_BATCH; i++, next++) controller.cancel(controller.submit(agentIds[next % AGENTS], optsOf(next)).requestRef);
        own.add(performance.now() - t0, PAIR_BATCH);
        t0 = performance.now();
        for (let i = done; i < done + PAIR_BATCH; i++, next++) {
          const ref = controller.submit(agentIds[next % AGENTS], optsOf(next)).requestRef;
          const j = victims[i];
          controller.cancel(live[j]);
          live[j] = ref;
        }
        random.add(performance.now() - t0, PAIR_BATCH);
      }
      return { own: own.result(), random: random.result() };
    },
  };
}

/**
 * Release a held permit (dispatch grants the first eligible queued request) RELEASE_BATCH times in a
 * row, timed; then top the queue up with as many `acquire`s, timed separately. Permits granted from
 * the queue reach us through their promises, hence the turn of the event loop between batches.
 */
export async function releaseAt(Controller, level, finiteDeadlines, workload) {
  const controller = saturated(Controller, level, finiteDeadlines, workload);
  const probe = new HeldProbe(workload);
  const { optsOf } = workload;
  const held = [];
  const acquire = (i) =>
    controller.acquire(agentIds[i % AGENTS], optsOf(i)).then((permit) => {
      probe.granted(i);
      held.push({ permit, i });
    });
  const failures = [];
  const watch = (promise) => promise.catch((error) => failures.push(error));
  let next = 0;
  for (let i = 0; i < GLOBAL_LIMIT + level; i++) watch(acquire(next++));
  await settle();
  return {
    controller,
    probe,
    async measure() {
      const release = new BatchTimer();
      const top = new BatchTimer();
      for (let done = 0; done < OPS; done += RELEASE_BATCH) {
        const batch = held.splice(0, RELEASE_BATCH);
        let t0 = performance.now();
        for (let k = 0; k < batch.length; k++) controller.release(batch[k].permit);
        release.add(performance.now() - t0, batch.length);
        for (let k = 0; k < batch.length; k++) probe.released(batch[k].i);
        t0 = performance.now();
        for (let k = 0; k < batch.length; k++) watch(acquire(next++));
        top.add(performance.now() - t0, batch.length);
        await settle();
        if (failures.length > 0) throw failures[0];
      }
      return { release: release.result(), acquire: top.result() };
    },
  };
}

/**
 * One warm-up round, then `reps` rounds over the levels in a rotated order, with no deadlines and with
 * finite ones. `workloadOf(level)` says what the requests ask for at that depth. Returns one row per
 * (deadlines, level): the median over the rounds of each metric's median batch and mean.
 */
export async function depthContest(Controller, levels, workloadOf, { reps, gc }) {
  const rows = [];
  for (const finite of [false, true]) {
    const pairs = levels.map((level) => submitCancelAt(Controller, level, finite, workloadOf(level)));
    const releases = await Promise.all(levels.map((level) => releaseAt(Controller, level, finite, workloadOf(level))));
    const samples = levels.map(() => Object.fromEntries(DEPTH_METRICS.map((m) => [m, { mean: [], median: [] }])));
    for (let rep = 0; rep <= reps; rep++) {
      for (let k = 0; k < levels.length; k++) {
        const index = (k + rep) % levels.length;
        gc();
        const { own, random } = pairs[index].measure();
        gc();
        const { release, acquire } = await releases[index].measure();
        if (rep === 0) continue;
        for (const [metric, result] of Object.entries({ own, random, release, acquire })) {
          samples[index][metric].mean.push(result.mean);
          samples[index][metric].median.push(result.median);
        }
      }
    }
    levels.forEach((level, i) => {
      const depths = [pairs[i], releases[i]].map((b) => b.controller.status().queue_length);
      if (depths.some((depth) => Math.abs(depth - level) > 1)) throw new Error(`depth drifted from ${level}: ${depths}`);
      const row = { finite, level, peaks: releases[i].probe.peaks, samples: samples[i] };
      for (const metric of DEPTH_METRICS) row[metric] = { mean: median(samples[i][metric].mean), median: median(samples[i][metric].median) };
      rows.push(row);
    });
  }
  return rows;
}

/** The ratio of the high level's figures to the low level's, per deadlines mode and metric. */
export function depthRatios(rows, [low, high]) {
  return [false, true].map((finite) => {
    const [a, b] = [low, high].map((level) => rows.find((row) => row.finite === finite && row.level === level));
    const ratio = { finite };
    for (const m of DEPTH_METRICS) {
      const perRound = b.samples[m].median.map((value, round) => value / a.samples[m].median[round]);
      ratio[m] = { median: b[m].median / a[m].median, mean: b[m].mean / a[m].mean, min: Math.min(...perRound), max: Math.max(...perRound) };
    }
    return ratio;
  });
}

// ---- report ----------------------------------------------------------------------------------------

export const ns = (value) => (value >= 10_000 ? `${(value / 1000).toFixed(0)} µs` : `${value.toFixed(0)} ns`);
export const times = (ratio) => `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}×`;
export const pad = (text, width) => String(text).padEnd(width);
export const lpad = (text, width) => String(text).padStart(width);
export const verdict = (met) => (met ? 'MET' : 'MISSED');

/** Prints the rows of {@link depthContest} and their ratio rows (median batch / mean); returns {@link depthRatios}. */
export function printDepths(title, rows, levels) {
  const cell = (m) => `${ns(m.median)} / ${ns(m.mean)}`;
  console.log(`\n${title}, ${OPS} ops per rep; median batch / mean`);
  console.log(`  ${pad('deadlines', 10)}${lpad('depth', 7)}${DEPTH_LABELS.map((label) => lpad(label, 22)).join('')}`);
  for (const row of rows) {
    console.log(`  ${pad(row.finite ? 'finite' : 'none', 10)}${lpad(row.level, 7)}${DEPTH_METRICS.map((m) => lpad(cell(row[m]), 22)).join('')}`);
  }
  const ratios = depthRatios(rows, levels);
  for (const ratio of ratios) {
    const cells = DEPTH_METRICS.map((m) => lpad(`${times(ratio[m].median)} / ${times(ratio[m].mean)}`, 22)).join('');
    console.log(`  ${pad(ratio.finite ? 'finite' : 'none', 10)}${lpad('ratio', 7)}${cells}`);
    const spread = DEPTH_METRICS.map((m) => lpad(`${times(ratio[m].min)}–${times(ratio[m].max)}`, 22)).join('');
    console.log(`  ${pad('', 10)}${lpad('rounds', 7)}${spread}`);
  }
  return ratios;
}
