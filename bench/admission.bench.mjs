// Admission benchmark (spec 01 §10): our AdmissionController beside p-limit, async-sema, p-queue and
// bottleneck, in one process, peers interleaved. Run with `npm run bench:admission`; see bench/README.md.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { median } from './stats.mjs';
import { AGENTS, agentIds, depthContest, lpad, ns, pad, printDepths, times, twoScopes, verdict } from './admission-depth.mjs';
import { flowControlBench } from './flow-control.bench.mjs';
import { benchArgs } from './args.mjs';

const require = createRequire(import.meta.url);
const { AdmissionController } = require('../dist/src/admission/admission-controller.js');
const pLimit = require('p-limit');
const { Sema } = require('async-sema');
const PQueue = require('p-queue').default;
const Bottleneck = require('bottleneck');

const TASKS = 100_000;
const REPS = 5; // measured repetitions, after one warm-up round
// Bottleneck yields to a 1 ms setTimeout several times per job, serialised by its submit lock, so
// 100,000 jobs take ~5 minutes per run. Its per-op time is flat in N (1k..8k: 3.7..2.9 ms/op), so it
// runs on fewer tasks and its per-op figure is compared as is.
const BOTTLENECK_TASKS = 1_000;

const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};
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

// ---- report ----------------------------------------------------------------------------------------



function printContest(title, rows) {
  const ours = rows.find((row) => row.ours);
  console.log(`\n${title}`);
  console.log(`  ${pad('limiter', 36)}${lpad('tasks', 7)}${lpad('wall/op', 10)}${lpad('cpu/op', 10)}${lpad('peak', 6)}${lpad('ours/peer wall', 16)}${lpad('cpu', 8)}`);
  for (const row of rows) {
    const wall = row === ours ? '' : times(ours.wall / row.wall);
    const cpu = row === ours ? '' : times(ours.cpu / row.cpu);
    console.log(`  ${pad(row.name, 36)}${lpad(row.tasks, 7)}${lpad(ns(row.wall), 10)}${lpad(ns(row.cpu), 10)}${lpad(row.peak, 6)}${lpad(wall, 16)}${lpad(cpu, 8)}`);
  }
  return ours;
}

async function main() {
  const { part = 'all' } = benchArgs(['part']);
  if (!['all', 'peers', 'flow'].includes(part)) throw new Error(`--part is all, peers or flow, not ${part}`);
  const started = performance.now();
  console.log(`admission benchmark: node ${process.version}, ${REPS} measured reps after 1 warm-up, median; gc between runs: ${globalThis.gc ? 'yes (--expose-gc)' : 'no'}`);
  const twoScopeDepth = part === 'flow' ? undefined : await spec01();
  if (part !== 'peers') await flowControlBench({ gc, twoScopeDepth });
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** Parts (a)–(c) of spec 01 §10; returns the depth ratios of (c). */
async function spec01() {

  const a = await contest(oneAgent, { global: 16, agent: 16 });
  const oursA = printContest('(a) one agent, limit 16, all tasks submitted at once', a);
  const pLimitA = a.find((row) => row.name.startsWith('p-limit'));

  const b = await contest(manyAgents, { global: 256, agent: 4 });
  const oursB = printContest(`(b) ${AGENTS} agents round-robin, agent limit 4, global 256`, b);
  const bottleneckB = b.find((row) => row.target);

  const levels = [100, TASKS];
  const rows = await depthContest(AdmissionController, levels, () => twoScopes, { reps: REPS, gc });
  const ratios = printDepths(`(c) ns/op at queue depth, ${AGENTS} agents, global 256 saturated`, rows, levels);
  const worst = (key, metrics) => Math.max(...ratios.flatMap((r) => metrics.map((m) => r[m][key])));

  console.log('\ntargets ((a), (b): wall / cpu)');
  console.log(`  (a) ours ≤ 1.0× p-limit per op: ${times(oursA.wall / pLimitA.wall)} / ${times(oursA.cpu / pLimitA.cpu)} → ${verdict(oursA.wall <= pLimitA.wall)} / ${verdict(oursA.cpu <= pLimitA.cpu)}`);
  console.log(`  (b) ours ≥ 3× faster than bottleneck: ${times(bottleneckB.wall / oursB.wall)} / ${times(bottleneckB.cpu / oursB.cpu)} → ${verdict(bottleneckB.wall >= 3 * oursB.wall)} / ${verdict(bottleneckB.cpu >= 3 * oursB.cpu)}`);
  for (const [label, metrics] of [['submit+cancel own, release', ['own', 'release']], ['submit+cancel random', ['random']]]) {
    const [m, w] = ['median', 'mean'].map((key) => worst(key, metrics));
    const spec = Math.max(m, w) < 3 ? 'spec bound < 3 met' : m < 3 ? 'spec bound < 3 met on median' : 'spec bound < 3 MISSED';
    console.log(`  (c) depth ratio ${TASKS}/100 ≤ 1.5, worst of ${label}: ${times(m)} / ${times(w)} (median / mean) → ${verdict(m <= 1.5)} / ${verdict(w <= 1.5)}; ${spec}`);
  }
  return ratios;
}

await main();
