// Flow-control benchmark (spec 09, issue 24): the cost of the tenant scope, costs and rates in the
// AdmissionController beside today's two-scope decision on the same build. Run from
// `npm run bench:admission` (all parts) or `node bench/admission.bench.mjs --part flow`; see bench/README.md.
//   (1) a decision (submit granted at once + release) over three scopes vs two scopes
//   (2) submit+cancel and release→grant at 100,000 queued over 10,000 tenants vs 100 queued over 100 tenants
//   (3) heapUsed after gc once 1,000,000 distinct tenants have come and gone vs 100 (child processes, --expose-gc)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';
import {
  AGENT_LIMIT,
  AGENTS,
  agentIds,
  BatchTimer,
  DEPTH_METRICS,
  depthContest,
  GLOBAL_LIMIT,
  lpad,
  ns,
  pad,
  printDepths,
  times,
  verdict,
} from './admission-depth.mjs';

const require = createRequire(import.meta.url);
const { AdmissionController } = require('../dist/src/admission/admission-controller.js');

const REPS = 5; // measured rounds after one warm-up round, in every part
const TENANT_LIMIT = 4;

// ---- which flow-control rules this build enforces ----------------------------------------------

/** The code and `details` of what `fn` throws, or null when it does not throw. */
function thrown(fn) {
  try {
    fn();
    return null;
  } catch (error) {
    return { code: error.code, ...error.details };
  }
}

/**
 * Checks, on small controllers, that this build refuses at a tenant's permit limit, at a tenant's
 * cost limit and over a tenant's rate. Where a rule is not enforced, the figures of this benchmark
 * measure a controller that ignores it, and the targets are reported as not applicable.
 */
export function enforcement() {
  const small = (extra) => new AdmissionController({ globalLimit: 16, defaultAgentLimit: 16, overflow: 'reject', ...extra });
  const tenant = small({ defaultTenantLimit: 2 });
  tenant.submit('a', { tenant: 't' });
  tenant.submit('b', { tenant: 't' });
  const count = thrown(() => tenant.submit('c', { tenant: 't' }));
  const cost = small({ defaultTenantCostLimit: 10 });
  cost.submit('a', { tenant: 't', cost: 8 });
  const costly = thrown(() => cost.submit('b', { tenant: 't', cost: 8 }));
  const rate = small({ rates: { defaultTenant: { requestsPerMinute: 1, burst: 1 } } });
  rate.release(rate.submit('a', { tenant: 't' }).permit);
  const rated = thrown(() => rate.submit('b', { tenant: 't' }));
  return {
    tenant: count?.code === 'concurrency_limit_reached' && count.limit_scope === 'tenant' && 'per_tenant' in tenant.status(),
    cost: costly?.code === 'concurrency_limit_reached' && costly.limit_scope === 'tenant' && costly.limit_kind === 'cost',
    rate: rated?.code === 'rate_limited' && rated.limit_scope === 'tenant' && rated.retry_after_ms > 0,
  };
}

// ---- (1) one decision over two and three scopes ------------------------------------------------

const DECISION_OPS = 50_000; // decisions per round and contestant
const DECISION_BATCH = 1_000; // decisions per timed batch
const WINDOW = 128; // permits held at once: every decision releases the oldest and submits one more

const tenantIds = (count) => Array.from({ length: count }, (_, i) => `tenant-${i}`);
const tenantOptions = (count, extra) => Object.freeze(tenantIds(count).map((tenant) => Object.freeze({ tenant, ...extra })));
const ample = (perMinute, burst) => ({ requestsPerMinute: perMinute, costPerMinute: perMinute * 8, burst, burstCost: burst * 8 });

/**
 * The contestants of (1). Each decision releases the oldest of WINDOW held permits and submits
 * (`overflow: 'reject'`) a request that must be granted at once; agents round-robin over 1,000, so an
 * agent holds at most one permit, and its state comes and goes as in (b). Tenants round-robin over
 * 10,000 (each comes and goes too) or over 100 (each keeps 1–2 permits, so its state stays).
 */
function decisionContestants() {
  const tenants10k = tenantOptions(10_000);
  const tenants100 = tenantOptions(100);
  const costly10k = tenantOptions(10_000, { cost: 8 });
  return [
    { name: 'two scopes: submit(agent) (floor)', floor: true, config: {}, optsOf: () => undefined },
    { name: 'three scopes, 10,000 tenants', target: true, config: { defaultTenantLimit: TENANT_LIMIT }, optsOf: (i) => tenants10k[i % 10_000] },
    { name: 'three scopes, 100 tenants', config: { defaultTenantLimit: TENANT_LIMIT }, optsOf: (i) => tenants100[i % 100] },
    {
      name: '+ cost limits and rates, cost 8',
      config: {
        defaultTenantLimit: TENANT_LIMIT,
        globalCostLimit: GLOBAL_LIMIT * 8,
        defaultAgentCostLimit: AGENT_LIMIT * 8,
        defaultTenantCostLimit: TENANT_LIMIT * 8,
        rates: { global: ample(6e9, 100_000), defaultAgent: ample(6e7, 1_000), defaultTenant: ample(6e7, 1_000) },
      },
      optsOf: (i) => costly10k[i % 10_000],
    },
  ];
}

class DecisionLoop {
  constructor({ config, optsOf }) {
    this.controller = new AdmissionController({ globalLimit: GLOBAL_LIMIT, defaultAgentLimit: AGENT_LIMIT, overflow: 'reject', ...config });
    this.optsOf = optsOf;
    this.ring = new Array(WINDOW);
    this.next = 0;
    for (; this.next < WINDOW; this.next++) this.ring[this.next] = this.grantNow(this.next);
  }

  grantNow(i) {
    const result = this.controller.submit(agentIds[i % AGENTS], this.optsOf(i));
    if (result.status !== 'granted') throw new Error(`decision ${i} was not granted at once`);
    return result.permit;
  }

  measure() {
    const timer = new BatchTimer();
    const { controller, ring, optsOf } = this;
    let next = this.next;
    const cpu = process.cpuUsage();
    for (let done = 0; done < DECISION_OPS; done += DECISION_BATCH) {
      const t0 = performance.now();
      for (let k = 0; k < DECISION_BATCH; k++, next++) {
        const slot = next % WINDOW;
        controller.release(ring[slot]);
        const result = controller.submit(agentIds[next % AGENTS], optsOf(next));
        if (result.status !== 'granted') throw new Error(`decision ${next} was not granted at once`);
        ring[slot] = result.permit;
      }
      timer.add(performance.now() - t0, DECISION_BATCH);
    }
    const used = process.cpuUsage(cpu);
    this.next = next;
    const status = controller.status();
    if (status.active !== WINDOW || status.queue_length !== 0) throw new Error(`held ${status.active} permits, ${status.queue_length} queued; expected ${WINDOW}, 0`);
    return { ...timer.result(), cpu: ((used.user + used.system) * 1000) / DECISION_OPS };
  }
}

async function decisionContest(gc) {
  const contestants = decisionContestants();
  const loops = contestants.map((c) => new DecisionLoop(c));
  const samples = contestants.map(() => ({ median: [], mean: [], cpu: [] }));
  for (let rep = 0; rep <= REPS; rep++) {
    for (let k = 0; k < loops.length; k++) {
      const index = (k + rep) % loops.length;
      gc();
      const result = loops[index].measure();
      if (rep === 0) continue;
      samples[index].median.push(result.median);
      samples[index].mean.push(result.mean);
      samples[index].cpu.push(result.cpu);
    }
  }
  const floor = samples[contestants.findIndex((c) => c.floor)];
  const paired = (i, key) => samples[i][key].map((value, round) => value / floor[key][round]);
  return contestants.map((c, i) => {
    const [batch, cpu] = [paired(i, 'median'), paired(i, 'cpu')];
    return {
      ...c,
      median: median(samples[i].median),
      mean: median(samples[i].mean),
      cpu: median(samples[i].cpu),
      ratio: { median: median(batch), min: Math.min(...batch), max: Math.max(...batch) },
      cpuRatio: { median: median(cpu), min: Math.min(...cpu), max: Math.max(...cpu) },
    };
  });
}

function printDecisions(rows) {
  const floor = rows.find((row) => row.floor);
  console.log(`\n(1) one decision (submit granted at once + release), ${AGENTS} agents, ${WINDOW} permits held, global ${GLOBAL_LIMIT}, agent ${AGENT_LIMIT}, tenant ${TENANT_LIMIT}; ${DECISION_OPS} per round`);
  console.log(`  ${pad('decision', 38)}${lpad('median batch', 14)}${lpad('mean', 10)}${lpad('cpu/op', 10)}${lpad('/ floor: batch', 16)}${lpad('rounds', 14)}${lpad('cpu', 8)}${lpad('rounds', 14)}`);
  const range = (r) => `${times(r.min)}–${times(r.max)}`;
  for (const row of rows) {
    const cells = row === floor ? ['', '', '', ''] : [times(row.ratio.median), range(row.ratio), times(row.cpuRatio.median), range(row.cpuRatio)];
    console.log(`  ${pad(row.name, 38)}${lpad(ns(row.median), 14)}${lpad(ns(row.mean), 10)}${lpad(ns(row.cpu), 10)}${lpad(cells[0], 16)}${lpad(cells[1], 14)}${lpad(cells[2], 8)}${lpad(cells[3], 14)}`);
  }
}

// ---- (2) cost per operation at a queue depth, with tenants ---------------------------------------

/** The requests of (2) at `level` queued: tenants round-robin over 100 at depth 100, over 10,000 at 100,000. */
function tenantWorkload(enforced) {
  return (level) => {
    const tenants = level <= 100 ? 100 : 10_000;
    const opts = tenantOptions(tenants);
    return {
      config: { defaultTenantLimit: TENANT_LIMIT },
      optsOf: (i) => opts[i % tenants],
      tenantOf: (i) => i % tenants,
      tenants,
      tenantLimit: enforced ? TENANT_LIMIT : Infinity,
    };
  };
}

// ---- (3) memory after tenants have come and gone ---------------------------------------------------

const MEMORY_CONFIG = Object.freeze({
  globalLimit: GLOBAL_LIMIT,
  defaultAgentLimit: AGENT_LIMIT,
  overflow: 'queue',
  maxQueue: 10_000,
  defaultQueueTimeoutMs: 'infinity',
  defaultTenantLimit: TENANT_LIMIT,
  rates: { defaultTenant: { requestsPerMinute: 600_000, burst: 2 } }, // a taken token is back after 0.1 ms
});
const MEMORY_BATCH = 1_000; // tenants acquiring at once (256 granted, the rest queued)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tenants `from` ≤ i < `to` each acquire once (agent i % 1,000) and release at once; checks the limits held. */
async function tenantsComeAndGo(controller, prefix, from, to) {
  let held = 0;
  let peak = 0;
  const once = async (i) => {
    const permit = await controller.acquire(agentIds[i % AGENTS], { tenant: `${prefix}-${i}` });
    if (++held > peak) peak = held;
    await null;
    held--;
    controller.release(permit);
  };
  for (let start = from; start < to; start += MEMORY_BATCH) {
    const batch = [];
    for (let i = start; i < Math.min(to, start + MEMORY_BATCH); i++) batch.push(once(i));
    await Promise.all(batch);
  }
  if (peak > GLOBAL_LIMIT) throw new Error(`${peak} permits held at once, over the global limit ${GLOBAL_LIMIT}`);
}

/** heapUsed once the buckets are full again and the garbage is collected (lowest of 3 readings). */
async function settledHeap(controller) {
  await sleep(50);
  controller.release(await controller.acquire(agentIds[0])); // one more decision, for state dropped lazily
  await sleep(10);
  const status = controller.status();
  const readings = [];
  for (let k = 0; k < 3; k++) {
    globalThis.gc();
    readings.push(process.memoryUsage().heapUsed);
  }
  return { heap: Math.min(...readings), active: status.active, queued: status.queue_length, tenants: status.other_tenants?.count ?? null, perTenant: Object.keys(status.per_tenant ?? {}).length };
}

/** In a child process with --expose-gc: prints one JSON line of heap figures. */
async function memoryChild(tenants) {
  await tenantsComeAndGo(new AdmissionController(MEMORY_CONFIG), 'warm', 0, 20_000); // compiles the code first
  const controller = new AdmissionController(MEMORY_CONFIG);
  // every agent once first: the controller may keep idle agent states (a bounded set, spec 09 §7 is about
  // tenants), so both readings hold the same agents and differ only by the tenants that came and went
  for (const agentId of agentIds) controller.release(await controller.acquire(agentId));
  await tenantsComeAndGo(controller, 'tenant', 0, 100);
  const after100 = await settledHeap(controller);
  const t0 = performance.now();
  await tenantsComeAndGo(controller, 'tenant', 100, tenants);
  const seconds = (performance.now() - t0) / 1000;
  const afterAll = await settledHeap(controller);
  console.log(JSON.stringify({ after100, afterAll, seconds }));
}

const MEMORY_TENANTS = 1_000_000;
const MEMORY_RUNS = 3;

function memoryRuns() {
  const runs = [];
  for (let k = 0; k < MEMORY_RUNS; k++) {
    const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--memory-child', String(MEMORY_TENANTS)], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`memory child failed: ${child.stderr}`);
    const run = JSON.parse(child.stdout.trim().split('\n').pop());
    for (const state of [run.after100, run.afterAll]) {
      if (state.active !== 0 || state.queued !== 0 || (state.tenants ?? 0) !== 0 || state.perTenant !== 0) throw new Error(`work left after the tenants went: ${JSON.stringify(state)}`);
    }
    runs.push({ ...run, ratio: run.afterAll.heap / run.after100.heap });
  }
  return runs;
}

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

function printMemory(runs) {
  console.log(`\n(3) heapUsed after gc, once tenants have come and gone (each acquires and releases once; ${MEMORY_RUNS} child processes)`);
  console.log(`  ${pad('run', 6)}${lpad('after 100', 14)}${lpad(`after ${MEMORY_TENANTS.toLocaleString('en')}`, 18)}${lpad('ratio', 8)}${lpad('bytes/tenant', 14)}${lpad('time', 8)}`);
  runs.forEach((run, k) => {
    const perTenant = (run.afterAll.heap - run.after100.heap) / (MEMORY_TENANTS - 100);
    console.log(`  ${pad(k + 1, 6)}${lpad(mib(run.after100.heap), 14)}${lpad(mib(run.afterAll.heap), 18)}${lpad(times(run.ratio), 8)}${lpad(perTenant.toFixed(2), 14)}${lpad(`${run.seconds.toFixed(1)} s`, 8)}`);
  });
}

// ---- all parts ----------------------------------------------------------------------------------------

/**
 * Runs (1)–(3) and prints their tables and targets; `gc` collects garbage before each timed round (a
 * no-op without --expose-gc). `twoScopeDepth`, the ratios of (c) when it ran in the same process, is
 * printed beside those of (2): the machine's cache and load move both alike.
 */
export async function flowControlBench({ gc, twoScopeDepth }) {
  const started = performance.now();
  const enforced = enforcement();
  const rules = Object.entries(enforced).map(([rule, on]) => `${rule} ${on ? 'yes' : 'NO'}`).join(', ');
  console.log(`\nflow control (spec 09): this build enforces tenant limits, tenant cost limits, tenant rates: ${rules}`);
  if (!enforced.tenant) console.log('  the tenant scope is NOT enforced by this build: (1)–(3) measure a controller that ignores tenants, and the targets are n/a');

  const decisions = await decisionContest(gc);
  printDecisions(decisions);

  const levels = [100, 100_000];
  const depthRows = await depthContest(AdmissionController, levels, tenantWorkload(enforced.tenant), { reps: REPS, gc });
  const ratios = printDepths(`(2) ns/op at queue depth with tenants (100 over 100 tenants, 100,000 over 10,000), ${AGENTS} agents, global ${GLOBAL_LIMIT} saturated, tenant limit ${TENANT_LIMIT}`, depthRows, levels);
  for (const ratio of twoScopeDepth ?? []) {
    const cells = DEPTH_METRICS.map((m) => lpad(`${times(ratio[m].median)} / ${times(ratio[m].mean)}`, 22)).join('');
    console.log(`  ${pad(ratio.finite ? 'finite' : 'none', 10)}${lpad('(c)', 7)}${cells}   ← two scopes, no tenants: (c) of this run`);
  }
  const peaks = depthRows.map((row) => row.peaks);
  console.log(`  permits held at once, highest seen: global ${Math.max(...peaks.map((p) => p.global))}, agent ${Math.max(...peaks.map((p) => p.agent))}, tenant ${Math.max(...peaks.map((p) => p.tenant))}`);

  const memory = memoryRuns();
  printMemory(memory);

  const applies = (met) => (enforced.tenant ? verdict(met) : 'n/a');
  const target = decisions.find((row) => row.target);
  console.log('\nflow-control targets');
  const [batch, cpu] = [target.ratio, target.cpuRatio];
  console.log(`  (1) three-scope decision ≤ 1.5× two-scope (median batch / cpu): ${times(batch.median)} / ${times(cpu.median)} (rounds ${times(batch.min)}–${times(batch.max)} / ${times(cpu.min)}–${times(cpu.max)}) → ${applies(batch.median <= 1.5)} / ${applies(cpu.median <= 1.5)}`);
  for (const metrics of [['own', 'release'], ['random']]) {
    const worst = (key) => Math.max(...ratios.flatMap((r) => metrics.map((m) => r[m][key])));
    console.log(`  (2) depth ratio 100,000/100 ≤ 1.5, worst of ${metrics.join(', ')}: ${times(worst('median'))} / ${times(worst('mean'))} (median / mean) → ${applies(worst('median') <= 1.5)} / ${applies(worst('mean') <= 1.5)}`);
  }
  const memoryRatio = median(memory.map((run) => run.ratio));
  console.log(`  (3) heap after ${MEMORY_TENANTS.toLocaleString('en')} tenants within 10% of after 100: median ${times(memoryRatio)} (runs ${memory.map((run) => times(run.ratio)).join(', ')}) → ${applies(memoryRatio <= 1.1)}`);
  console.log(`flow control: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { enforced, decisions, depthRows, ratios, memory };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--memory-child');
  if (at > 0) await memoryChild(Number(process.argv[at + 1]));
  else await flowControlBench({ gc: typeof globalThis.gc === 'function' ? globalThis.gc : () => {} });
}
