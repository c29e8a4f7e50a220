// Admission benchmark (spec 01 §10): our AdmissionController beside p-limit, async-sema, p-queue and
// bottleneck, in one process, peers interleaved. Run with `npm run bench:admission`; see bench/README.md.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const { AdmissionController } = require('../dist/src/admission/admission-controller.js');
const pLimit = require('p-limit');
const { Sema } = require('async-sema');
const PQueue = require('p-queue').default;
const Bottleneck = require('bottleneck');

const TASKS = 100_000;
const AGENTS = 1_000;
const REPS = 5; // measured repetitions, after one warm-up round
const OPS = 10_000; // operations per (c) measurement
const RELEASE_BATCH = 16; // releases timed back to back before the queue is topped up again
// Bottleneck yields to a 1 ms setTimeout several times per job, serialised by its submit lock, so
// 100,000 jobs take ~5 minutes per run. Its per-op time is flat in N (1k..8k: 3.7..2.9 ms/op), so it
// runs on fewer tasks and its per-op figure is compared as is.
const BOTTLENECK_TASKS = 2_000;

const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};
const agentIds = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
const queueConfig = (extra) => ({ overflow: 'queue', maxQueue: TASKS, defaultQueueTimeoutMs: 'infinity', ...extra });

// ---- the unit of work: trivial, and it checks that the limits held -----------------------------

/** Counts concurrently running tasks (globally and per agent) so a broken limiter cannot look fast. */
class Probe {
  constructor(agents) {
    this.running = 0;
    this.peak = 0;
    this.perAgent = new Int32Array(agents);
    this.agentPeak = 0;
    this.done = 0;
  }

  async unit(agent) {
    if (++this.running > this.peak) this.peak = this.running;
    const mine = ++this.perAgent[agent];
    if (mine > this.agentPeak) this.agentPeak = mine;
    await null;
    this.perAgent[agent]--;
    this.running--;
    this.done++;
  }
}

// ---- contestants: each `start(n, probe)` submits n tasks at once and returns a promise of all --

async function oursAcquire(controller, agent, probe) {
  const permit = await controller.acquire(agentIds[agent]);
  try {
    await probe.unit(agent);
  } finally {
    controller.release(permit);
  }
}

const oneAgent = [
  {
    name: 'ours acquire+release',
    ours: true,
    start(n, probe) {
      const controller = new AdmissionController(queueConfig({ globalLimit: 16, defaultAgentLimit: 16 }));
      return submitAll(n, () => oursAcquire(controller, 0, probe));
    },
  },
  {
    name: 'ours run()',
    start(n, probe) {
      const controller = new AdmissionController(queueConfig({ globalLimit: 16, defaultAgentLimit: 16 }));
      return submitAll(n, () => controller.run(agentIds[0], () => probe.unit(0)));
    },
  },
  {
    name: 'p-limit 3.1.0 (16)',
    peer: true,
    start(n, probe) {
      const limit = pLimit(16);
      return submitAll(n, () => limit(() => probe.unit(0)));
    },
  },
  {
    name: 'async-sema 3.1.1 (16)',
    peer: true,
    start(n, probe) {
      const sema = new Sema(16, { capacity: n });
      return submitAll(n, async () => {
        await sema.acquire();
        try {
          await probe.unit(0);
        } finally {
          sema.release();
        }
      });
    },
  },
  {
    name: 'p-queue 6.6.2 (16)',
    peer: true,
    start(n, probe) {
      const queue = new PQueue({ concurrency: 16 });
      return submitAll(n, () => queue.add(() => probe.unit(0)));
    },
  },
  {
    name: 'bottleneck 2.19.5 (16)',
    peer: true,
    tasks: BOTTLENECK_TASKS,
    start(n, probe) {
      const limiter = new Bottleneck({ maxConcurrent: 16 });
      return submitAll(n, () => limiter.schedule(() => probe.unit(0)));
    },
  },
];

const manyAgents = [
  {
    name: 'ours acquire+release',
    ours: true,
    start(n, probe) {
      const controller = new AdmissionController(queueConfig({ globalLimit: 256, defaultAgentLimit: 4 }));
      return submitAll(n, (i) => oursAcquire(controller, i % AGENTS, probe));
    },
  },
  {
    name: 'bottleneck Group(4).chain(256)',
    peer: true,
    target: true,
    tasks: BOTTLENECK_TASKS,
    start(n, probe) {
      const global = new Bottleneck({ maxConcurrent: 256 });
      const group = new Bottleneck.Group({ maxConcurrent: 4 });
      group.on('created', (limiter) => limiter.chain(global));
      return submitAll(n, (i) => group.key(agentIds[i % AGENTS]).schedule(() => probe.unit(i % AGENTS)));
    },
  },
  {
    name: 'p-limit per agent(4) → p-limit(256)',
    peer: true,
    start(n, probe) {
      const global = pLimit(256);
      const perAgent = new Map();
      const limitOf = (id) => perAgent.get(id) ?? perAgent.set(id, pLimit(4)).get(id);
      return submitAll(n, (i) => limitOf(agentIds[i % AGENTS])(() => global(() => probe.unit(i % AGENTS))));
    },
  },
  {
    name: 'p-limit(256), global only',
    peer: true,
    globalOnly: true,
    start(n, probe) {
      const limit = pLimit(256);
      return submitAll(n, (i) => limit(() => probe.unit(i % AGENTS)));
    },
  },
  {
    name: 'p-queue(256), global only',
    peer: true,
    globalOnly: true,
    start(n, probe) {
      const queue = new PQueue({ concurrency: 256 });
      return submitAll(n, (i) => queue.add(() => probe.unit(i % AGENTS)));
    },
  },
];

function submitAll(n, task) {
  const all = new Array(n);
  for (let i = 0; i < n; i++) all[i] = task(i);
  return Promise.all(all);
}

/** One timed run: wall and CPU nanoseconds per task, from the first submit to the last settle. */
async function timeRun(contestant, limits) {
  const n = contestant.tasks ?? TASKS;
  const probe = new Probe(AGENTS);
  gc();
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await contestant.start(n, probe);
  const wall = Number(process.hrtime.bigint() - t0);
  const used = process.cpuUsage(cpu);
  if (probe.done !== n || probe.peak > limits.global || (!contestant.globalOnly && probe.agentPeak > limits.agent)) {
    throw new Error(`${contestant.name}: done ${probe.done}/${n}, peak ${probe.peak}, agent peak ${probe.agentPeak}`);
  }
  return { wall: wall / n, cpu: ((used.user + used.system) * 1000) / n, peak: probe.peak };
}

/** Warm-up round, then REPS rounds; each round runs every contestant once, in a rotated order. */
async function contest(contestants, limits) {
  const samples = contestants.map(() => ({ wall: [], cpu: [], peak: 0 }));
  for (let rep = 0; rep <= REPS; rep++) {
    for (let k = 0; k < contestants.length; k++) {
      const index = (k + rep) % contestants.length;
      const result = await timeRun(contestants[index], limits);
      if (rep === 0) continue;
      samples[index].wall.push(result.wall);
      samples[index].cpu.push(result.cpu);
      samples[index].peak = Math.max(samples[index].peak, result.peak);
    }
  }
  return contestants.map((c, i) => ({ ...c, tasks: c.tasks ?? TASKS, wall: median(samples[i].wall), cpu: median(samples[i].cpu), peak: samples[i].peak }));
}

// ---- (c) per-op cost at a queue depth ------------------------------------------------------------

/** A controller with the global limit saturated and `level` requests queued round-robin over AGENTS. */
function saturated(level, finiteDeadlines) {
  return new AdmissionController({
    globalLimit: 256,
    defaultAgentLimit: 4,
    overflow: 'queue',
    maxQueue: level + 1,
    defaultQueueTimeoutMs: finiteDeadlines ? 600_000 : 'infinity',
  });
}

/** Submit one request and cancel a random queued one, so the depth stays at `level`. */
function submitCancelAt(level, finiteDeadlines) {
  const controller = saturated(level, finiteDeadlines);
  let next = 0;
  for (let i = 0; i < 256; i++) controller.submit(agentIds[next++ % AGENTS]);
  const live = new Array(level);
  for (let i = 0; i < level; i++) live[i] = controller.submit(agentIds[next++ % AGENTS]).requestRef;
  const victims = randomIndices(OPS, level);
  return {
    controller,
    measure() {
      const t0 = performance.now();
      for (let i = 0; i < OPS; i++) {
        const ref = controller.submit(agentIds[next++ % AGENTS]).requestRef;
        const j = victims[i];
        controller.cancel(live[j]);
        live[j] = ref;
      }
      return ((performance.now() - t0) * 1e6) / OPS;
    },
  };
}

/**
 * Release a held permit (dispatch grants the oldest eligible queued request) RELEASE_BATCH times in a
 * row, timed; then top the queue up with as many `acquire`s, timed separately.
 */
async function releaseAt(level, finiteDeadlines) {
  const controller = saturated(level, finiteDeadlines);
  const held = [];
  const hold = (permit) => held.push(permit);
  let next = 0;
  for (let i = 0; i < 256 + level; i++) controller.acquire(agentIds[next++ % AGENTS]).then(hold);
  await settle();
  return {
    controller,
    async measure() {
      let releaseMs = 0;
      let acquireMs = 0;
      for (let done = 0; done < OPS; done += RELEASE_BATCH) {
        const batch = held.splice(0, RELEASE_BATCH);
        let t0 = performance.now();
        for (let i = 0; i < batch.length; i++) controller.release(batch[i]);
        releaseMs += performance.now() - t0;
        t0 = performance.now();
        for (let i = 0; i < batch.length; i++) controller.acquire(agentIds[next++ % AGENTS]).then(hold);
        acquireMs += performance.now() - t0;
        await settle();
      }
      return { release: (releaseMs * 1e6) / OPS, acquire: (acquireMs * 1e6) / OPS };
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function randomIndices(count, below) {
  let seed = 0x9e3779b9; // mulberry32: the same victims on every run
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = (((t ^ (t >>> 14)) >>> 0) % below) >>> 0;
  }
  return out;
}

async function depthContest(levels) {
  const rows = [];
  for (const finite of [false, true]) {
    const pairs = levels.map((level) => submitCancelAt(level, finite));
    const releases = await Promise.all(levels.map((level) => releaseAt(level, finite)));
    const samples = levels.map(() => ({ pair: [], release: [], acquire: [] }));
    for (let rep = 0; rep <= REPS; rep++) {
      for (let k = 0; k < levels.length; k++) {
        const index = (k + rep) % levels.length;
        gc();
        const pair = pairs[index].measure();
        gc();
        const { release, acquire } = await releases[index].measure();
        if (rep === 0) continue;
        samples[index].pair.push(pair);
        samples[index].release.push(release);
        samples[index].acquire.push(acquire);
      }
    }
    levels.forEach((level, i) => {
      const depths = [pairs[i], releases[i]].map((b) => b.controller.status().queue_length);
      if (depths.some((depth) => Math.abs(depth - level) > 1)) throw new Error(`depth drifted from ${level}: ${depths}`);
      rows.push({ finite, level, pair: median(samples[i].pair), release: median(samples[i].release), acquire: median(samples[i].acquire) });
    });
  }
  return rows;
}

// ---- report ----------------------------------------------------------------------------------------

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const ns = (value) => (value >= 10_000 ? `${(value / 1000).toFixed(0)} µs` : `${value.toFixed(0)} ns`);
const pad = (text, width) => String(text).padEnd(width);
const lpad = (text, width) => String(text).padStart(width);
const verdict = (met) => (met ? 'MET' : 'MISSED');

function printContest(title, rows) {
  const ours = rows.find((row) => row.ours);
  console.log(`\n${title}`);
  console.log(`  ${pad('limiter', 36)}${lpad('tasks', 8)}${lpad('wall/op', 10)}${lpad('cpu/op', 10)}${lpad('peak', 6)}${lpad('ours/peer', 11)}`);
  for (const row of rows) {
    const ratio = row === ours ? '' : `${(ours.wall / row.wall).toFixed(2)}×`;
    console.log(`  ${pad(row.name, 36)}${lpad(row.tasks, 8)}${lpad(ns(row.wall), 10)}${lpad(ns(row.cpu), 10)}${lpad(row.peak, 6)}${lpad(ratio, 11)}`);
  }
  return ours;
}

async function main() {
  const started = performance.now();
  console.log(`admission benchmark: node ${process.version}, ${REPS} measured reps after 1 warm-up, median; gc between runs: ${globalThis.gc ? 'yes (--expose-gc)' : 'no'}`);

  const a = await contest(oneAgent, { global: 16, agent: 16 });
  const oursA = printContest('(a) one agent, limit 16, all tasks submitted at once', a);
  const pLimitA = a.find((row) => row.name.startsWith('p-limit'));

  const b = await contest(manyAgents, { global: 256, agent: 4 });
  const oursB = printContest(`(b) ${AGENTS} agents round-robin, agent limit 4, global 256`, b);
  const bottleneckB = b.find((row) => row.target);

  const c = await depthContest([100, TASKS]);
  console.log(`\n(c) per-op cost at queue depth, ${AGENTS} agents, global 256 saturated, ${OPS} ops per measurement`);
  console.log(`  ${pad('deadlines', 11)}${lpad('depth', 8)}${lpad('submit+cancel', 15)}${lpad('release→grant', 15)}${lpad('acquire (queued)', 18)}`);
  for (const row of c) {
    console.log(`  ${pad(row.finite ? 'finite' : 'none', 11)}${lpad(row.level, 8)}${lpad(ns(row.pair), 15)}${lpad(ns(row.release), 15)}${lpad(ns(row.acquire), 18)}`);
  }
  const depthRatios = [false, true].map((finite) => {
    const [low, high] = c.filter((row) => row.finite === finite);
    return { finite, pair: high.pair / low.pair, release: high.release / low.release, acquire: high.acquire / low.acquire };
  });
  for (const r of depthRatios) {
    console.log(`  ratio ${TASKS}/100, deadlines ${pad(r.finite ? 'finite:' : 'none:', 8)} submit+cancel ${r.pair.toFixed(2)}×, release ${r.release.toFixed(2)}×, acquire ${r.acquire.toFixed(2)}×`);
  }

  const worstDepth = Math.max(...depthRatios.flatMap((r) => [r.pair, r.release]));
  console.log('\ntargets');
  console.log(`  (a) ours ≤ 1.0× p-limit per op: ${(oursA.wall / pLimitA.wall).toFixed(2)}× → ${verdict(oursA.wall <= pLimitA.wall)}`);
  console.log(`  (b) ours ≥ 3× faster than bottleneck: ${(bottleneckB.wall / oursB.wall).toFixed(0)}× → ${verdict(bottleneckB.wall >= 3 * oursB.wall)}`);
  console.log(`  (c) ${TASKS}/100 depth ratio ≤ 1.5 (spec < 3): worst ${worstDepth.toFixed(2)}× → ${verdict(worstDepth <= 1.5)}${worstDepth < 3 ? ' (spec bound met)' : ''}`);
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

await main();
