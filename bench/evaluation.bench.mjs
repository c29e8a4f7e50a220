// Evaluation service benchmark (spec 05) on real Postgres, peers and floors side by side in one run:
//   (1) preparation: RequestPreparationPool.prepare() against prepareEvalRequest() in process on the
//       same input (the cost of isolation), for a small request and a near-limit one (49,999 nodes),
//       and the event-loop time one submission costs;
//   (2) job overhead: a 10-case job through EvalService.submit → completed against
//       LocalEvalExecutor.start on the same job directly, 1 and 4 jobs in flight;
//   (3) store: createEvaluation + queued→running→completed per job against three plain single-row
//       statements on a scratch table of the same database.
// Run `npm run bench:evaluation` (builds first); method and figures: bench/RESULTS.md, "Evaluation service".
//
//   node bench/evaluation.bench.mjs [--rounds 15] [--small 400] [--near 30] [--submits 10]
//                                   [--jobs 30] [--store-jobs 100] [--only prep|jobs|store]
//
// DATABASE_URL: that server (a database of its own is created and dropped); else a throw-away
// embedded server (fsync=off), as in bench/ledger.bench.mjs.
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { serialize } from 'node:v8';
import { median, pairedRatio, spread, summary } from './stats.mjs';
import { benchArgs } from './args.mjs';
import { onServer, openServer, withDatabase } from './database.mjs';
import { gitCommit } from './run-info.mjs';

const require = createRequire(import.meta.url);
const { Client } = require('pg');
const { createAgentRuntimeDataSource } = require('../dist/src/database/data-source.factory.js');
const { EvalService } = require('../dist/src/evaluation/service/eval-service.js');
const { PostgresEvalStore } = require('../dist/src/evaluation/store/postgres-eval-store.js');
const { RequestPreparationPool } = require('../dist/src/evaluation/preparation/request-preparation-pool.js');
const { resolvePreparationOptions } = require('../dist/src/evaluation/preparation/preparation-options.js');
const { prepareEvalRequest } = require('../dist/src/evaluation/preparation/request-preparation.js');
const { prewalkRequest } = require('../dist/src/evaluation/preparation/request-prewalk.js');
const { LocalEvalExecutor } = require('../dist/src/evaluation/executor/local-eval-executor.js');
const { Runner } = require('../dist/src/runner/runner.js');
const { InMemorySessionService } = require('../dist/src/services/sessions/in-memory-session-service.js');
const { RunRegistry } = require('../dist/src/runner/runs/run-registry.js');
const { frozenJsonCopy, frozenJsonParse } = require('../dist/src/json/json-copy.js');
const { TelemetryEvents } = require('../dist/src/telemetry/telemetry-events.js');

const args = benchArgs(['rounds', 'small', 'near', 'submits', 'jobs', 'store-jobs', 'only']);
const ROUNDS = Number(args.rounds ?? 15);
const SMALL_PAIRS = Number(args.small ?? 400);
const NEAR_PAIRS = Number(args.near ?? 30);
const SUBMITS = Number(args.submits ?? 10);
const JOBS = Number(args.jobs ?? 30);
const STORE_JOBS = Number(args['store-jobs'] ?? 100);
const PARTS = ['prep', 'jobs', 'store'];
if (args.only !== undefined && !PARTS.includes(args.only)) throw new Error(`--only: one of ${PARTS.join(', ')}`);
const runs = (part) => args.only === undefined || args.only === part;

/** The service's default `taskTimeoutMs` (what it hands the preparation). */
const LIMITS = Object.freeze({ taskTimeoutMs: 3_600_000 });
const AGENT = 'bench-agent';
const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled']);
/** How the preparation pool is configured, for the report (set in main). */
let poolNote = '';

// ---- the agent: a deterministic model (as in test/support/eval-service-harness.ts) -----------------

const lastUserText = (request) => {
  const entry = [...request.contents].reverse().find((item) => item.role === 'user');
  return entry ? entry.content.parts.map((part) => part.text ?? '').join(' ') : '';
};
const lookup = {
  name: 'lookup',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
  execute: (a) => ({ found: String(a.q).length }),
};
/** Calls `lookup {q: <input>}`, then answers `The answer is 42.`: 2 model calls, 1 tool call per case. */
const model = {
  name: 'bench-model',
  generate: async (request) => (request.contents.at(-1)?.role === 'tool' ? { text: 'The answer is 42.' } : { toolCalls: [{ name: 'lookup', args: { q: lastUserText(request) } }] }),
};
const registry = new RunRegistry({ runners: [new Runner({ appName: 'bench-eval', agent: { name: AGENT, tools: [lookup], model }, sessionService: new InMemorySessionService() })] });

// ---- requests (builders copied from src/evaluation/testing/eval-requests.ts, agent renamed) ------------------

/** A job of `cases` cases that the agent passes on both metrics. */
function jobRequest(cases = 10) {
  return {
    set: {
      id: 'bench-set',
      version: '1',
      cases: Array.from({ length: cases }, (_, i) => ({
        case_id: `case-${i}`,
        input: `question ${i}`,
        expected_output: 'The answer is 42.',
        expected_tool_calls: [{ name: 'lookup', args: { q: `question ${i}` } }],
      })),
    },
    agent: AGENT,
    metrics: [{ name: 'response_match' }, { name: 'tool_trajectory' }],
  };
}

/** The small valid request of the tests: two cases, both metric kinds, options and metadata. */
function smallRequest() {
  return {
    set: {
      id: 'smoke',
      version: 'v1',
      cases: [
        { case_id: 'greeting', input: 'Say hello', expected_output: 'hello' },
        { case_id: 'lookup', input: { role: 'user', parts: [{ text: 'Weather in Paris?' }] }, expected_tool_calls: [{ name: 'get_weather', args: { city: 'Paris' } }] },
      ],
    },
    agent: AGENT,
    metrics: [{ name: 'response_match', threshold: 0.5 }, { name: 'tool_trajectory' }],
    options: { case_timeout_ms: 5000 },
    metadata: { build: '1.2.3', owner: { team: 'evals' } },
  };
}

/** Values as the pre-walk counts them: every value, the root and every object member included. */
function countNodes(value) {
  let nodes = 0;
  const pending = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    nodes++;
    if (typeof current === 'object' && current !== null) pending.push(...Object.values(current));
  }
  return nodes;
}

/** `nearLimitRequest()` of the tests: 10,000 cases of 120-byte inputs, padded with numbers to exactly `nodes` nodes. */
function nearLimitRequest(nodes = 49_999, inputBytes = 120) {
  const cases = Array.from({ length: 10_000 }, (_, index) => ({ case_id: `case-${index}`, input: `${index} ${'q'.repeat(inputBytes)}`.slice(0, inputBytes), expected_output: 'ok' }));
  const request = { ...smallRequest(), set: { id: 'near-limit', version: 'v1', cases }, metrics: [{ name: 'response_match' }], metadata: { padding: [] } };
  delete request.options;
  request.metadata.padding = Array.from({ length: nodes - countNodes(request) }, (_, index) => index);
  return request;
}

/** The request prepared in process, as the service holds it: the worker's JSON parsed and frozen. */
function preparedInProcess(request) {
  const outcome = prepareEvalRequest(request, LIMITS);
  if (!outcome.ok) throw new Error(`request refused: ${outcome.code}`);
  return frozenJsonParse(JSON.stringify(outcome.prepared));
}

const newJobId = () => `eval-${randomBytes(16).toString('hex')}`;
const executionOf = (prepared, scope) => ({ job_id: newJobId(), scope, agent: prepared.agent, set: prepared.set, metrics: prepared.metrics, options: prepared.options });

// ---- statistics and printing -----------------------------------------------------------------------

/** Nearest-rank quantile. */
const quantile = (values, p) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * values.length) - 1)];
const f = (n, digits = 2) => n.toFixed(digits);
const x = (n) => `${n.toFixed(2)}×`;
const int = (n) => Math.round(n).toLocaleString('en-US');
const check = (condition, message) => {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
};


/** Resolves one waiter per terminal transition (telemetry carries no job id, so waiters are served in order). */
class TerminalEvents {
  waiters = [];
  unexpected = 0;
  counts = {};
  emit(event, payload) {
    if (event !== TelemetryEvents.evaluationJob || !TERMINAL.has(payload.to)) return;
    this.counts[payload.to] = (this.counts[payload.to] ?? 0) + 1;
    const waiter = this.waiters.shift();
    if (waiter === undefined) this.unexpected++;
    else waiter(payload.to);
  }
  next() {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

// ---- (1) preparation -------------------------------------------------------------------------------

/** `pairs` calls of each, alternating which goes first; per call wall ms, and event-loop busy ms for the pool. */
async function preparationPairs(pool, request, pairs, warm) {
  const poolCall = async () => {
    const e0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    const prepared = await pool.prepare(request, LIMITS);
    const wall = performance.now() - t0;
    return { wall, loop: performance.eventLoopUtilization(e0).active, bytes: prepared.request_bytes };
  };
  const floorCall = async () => {
    const t0 = performance.now();
    const outcome = prepareEvalRequest(request, LIMITS);
    const wall = performance.now() - t0;
    check(outcome.ok, 'the in-process preparation refused the request');
    return { wall, loop: wall, bytes: outcome.prepared.request_bytes };
  };
  for (let i = 0; i < warm; i++) await poolCall(), await floorCall();
  const poolRows = [];
  const floorRows = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) poolRows.push(await poolCall()), floorRows.push(await floorCall());
    else floorRows.push(await floorCall()), poolRows.push(await poolCall());
  }
  check(poolRows.every((r) => r.bytes === floorRows[0].bytes), 'pool and in-process preparation disagree on request_bytes');
  return { poolRows, floorRows, ratios: poolRows.map((r, i) => r.wall / floorRows[i].wall) };
}

/** Median ms of `fn` over `n` calls (after one warm-up call). */
function timed(fn, n) {
  fn();
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** What the event loop does for a near-limit request, piece by piece. */
function eventLoopPieces(request) {
  const copy = prewalkRequest(request);
  const task = { request: copy, limits: LIMITS };
  const prepared = prepareEvalRequest(request, LIMITS).prepared;
  const replyJson = JSON.stringify(prepared);
  return [
    ['`prewalkRequest(request)` (bounded pre-walk + copy)', timed(() => prewalkRequest(request), 15)],
    ['`structuredClone({request: copy, limits})` (serialise + deserialise)', timed(() => structuredClone(task), 15)],
    ['`v8.serialize({request: copy, limits})` (the serialising half, what postMessage pays here)', timed(() => serialize(task), 15)],
    ['`frozenJsonParse(reply.json)` (the prepared request back: JSON.parse + deepFreeze)', timed(() => frozenJsonParse(replyJson), 15)],
    ['`JSON.stringify` of set, metrics, options, metadata (the texts createEvaluation sends)', timed(() => [prepared.set, prepared.metrics, prepared.options, prepared.metadata].map((v) => JSON.stringify(v)), 15)],
  ];
}

/** Whole `submit()` calls through a service whose executor settles at once, timed to the terminal transition. */
async function wholeSubmits(service, terminals, scope, request, n) {
  const rows = [];
  for (let i = 0; i <= n; i++) {
    const e0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    const done = terminals.next();
    const job = await service.submit(scope, request);
    const resolved = performance.now() - t0;
    check((await done) === 'failed', 'the stub job did not end failed');
    const wall = performance.now() - t0;
    const loop = performance.eventLoopUtilization(e0).active;
    check(job.job_id.startsWith('eval-'), 'submit did not return a job');
    if (i > 0) rows.push({ wall, resolved, loop }); // the first warms up
  }
  return rows;
}

async function partPreparation(dataSource, pool) {
  const small = smallRequest();
  const near = nearLimitRequest();
  check(countNodes(near) === 49_999, `near-limit request has ${countNodes(near)} nodes`);
  const nearBytes = preparedInProcess(near).request_bytes;
  const smallPairs = await preparationPairs(pool, small, SMALL_PAIRS, 50);
  const nearPairs = await preparationPairs(pool, near, NEAR_PAIRS, 3);
  const pieces = eventLoopPieces(near);

  // a service of its own (stopped before part 2 starts one) whose executor settles at once
  const terminals = new TerminalEvents();
  const stub = { start: async () => ({ status: 'error', reason: 'bench_stub' }) };
  const service = new EvalService({ store: new PostgresEvalStore(dataSource), registry, events: terminals }, { worker: { executor: stub } });
  await service.start();
  let submits;
  try {
    submits = {
      small: await wholeSubmits(service, terminals, { app: 'bench-submit' }, small, SUBMITS * 3),
      near: await wholeSubmits(service, terminals, { app: 'bench-submit' }, near, SUBMITS),
    };
  } finally {
    await service.stop();
  }

  console.log(`\n### (1) Preparation: \`RequestPreparationPool.prepare()\` against \`prepareEvalRequest()\` in process\n`);
  console.log(`Pool of ${poolNote}; calls one at a time, the two alternating which goes first; ms per call. Near-limit: 49,999 nodes, 10,000 cases, request_bytes ${int(nearBytes)}.\n`);
  console.log('| Request | Contestant | median | p95 | min | event-loop busy, median | pool / in process (median of pairs) | ratio of medians |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [name, r] of [[`small (${SMALL_PAIRS} pairs)`, smallPairs], [`near-limit (${NEAR_PAIRS} pairs)`, nearPairs]]) {
    const pw = r.poolRows.map((row) => row.wall);
    const fw = r.floorRows.map((row) => row.wall);
    console.log(`| ${name} | pool.prepare() | ${f(median(pw))} | ${f(quantile(pw, 0.95))} | ${f(Math.min(...pw))} | ${f(median(r.poolRows.map((row) => row.loop)))} | **${x(median(r.ratios))}** | ${x(median(pw) / median(fw))} |`);
    console.log(`| ${name} | prepareEvalRequest() in process (floor) | ${f(median(fw))} | ${f(quantile(fw, 0.95))} | ${f(Math.min(...fw))} | ${f(median(fw))} (all of it) | | |`);
  }
  console.log(`\nIsolation cost per call (median pool − median floor): small ${f(median(smallPairs.poolRows.map((r) => r.wall)) - median(smallPairs.floorRows.map((r) => r.wall)))} ms, near-limit ${f(median(nearPairs.poolRows.map((r) => r.wall)) - median(nearPairs.floorRows.map((r) => r.wall)))} ms; spread (IQR/median) of the pool's near-limit calls ${f(spread(nearPairs.poolRows.map((r) => r.wall)) * 100, 0)} %.`);
  console.log(`\nEvent-loop work for one near-limit request, piece by piece (median of 15 calls each, ms):\n`);
  console.log('| Piece | ms |');
  console.log('|---|---|');
  for (const [label, ms] of pieces) console.log(`| ${label} | ${f(ms)} |`);
  console.log(`\nWhole \`EvalService.submit()\` until the terminal transition, executor stubbed (settles at once, job ends \`failed\`), one at a time; ms:\n`);
  console.log('| Request | submits | wall to terminal, median | p95 | submit() resolved, median | event-loop busy, median | p95 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, rows] of [['small', submits.small], ['near-limit', submits.near]]) {
    const loop = rows.map((r) => r.loop);
    const wall = rows.map((r) => r.wall);
    console.log(`| ${name} | ${rows.length} | ${f(median(wall))} | ${f(quantile(wall, 0.95))} | ${f(median(rows.map((r) => r.resolved)))} | ${f(median(loop))} | ${f(quantile(loop, 0.95))} |`);
  }
}

// ---- interleaved blocks (parts 2 and 3) -------------------------------------------------------------

/** One block of `c.n` jobs: wall and CPU ms per job (CPU: the whole process, worker threads included). */
async function timeBlock(c) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const latencies = await c.run(c.n);
  const wall = (performance.now() - t0) / c.n;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / 1e3 / c.n, latencies: latencies ?? [] };
}

/** One warm-up block each, then ROUNDS rounds of one block per contestant, order rotated by one per round. */
async function contest(contestants) {
  for (const c of contestants) await c.run(Math.max(4, c.n >> 1));
  const samples = contestants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + round) % contestants.length;
      samples[i][round] = await timeBlock(contestants[i]);
    }
  }
  return Object.fromEntries(contestants.map((c, i) => [c.key, { ...c, samples: samples[i], ...summary(samples[i]), latencies: samples[i].flatMap((s) => s.latencies) }]));
}

/** `n` jobs, at most `inFlight` at once: each worker starts the next job when its own ends. */
async function inFlight(n, k, job) {
  let started = 0;
  await Promise.all(
    Array.from({ length: k }, async () => {
      while (started < n) {
        started++;
        await job();
      }
    }),
  );
}

// ---- (2) job overhead -----------------------------------------------------------------------------

async function partJobs(dataSource, pool) {
  const request = jobRequest(10);
  const prepared = preparedInProcess(request);
  const executor = new LocalEvalExecutor(registry);
  const signal = new AbortController().signal;
  const terminals = new TerminalEvents();
  const scope = { app: 'bench-jobs' };
  const partsScope = { app: 'bench-parts' };
  const directStore = new PostgresEvalStore(dataSource);
  const service = new EvalService({ store: new PostgresEvalStore(dataSource), registry, events: terminals }, { maxConcurrency: 4 });
  await service.start();
  let submitted = 0;
  const viaService = async () => {
    const t0 = performance.now();
    const done = terminals.next();
    await service.submit(scope, request);
    submitted++;
    const to = await done;
    if (to !== 'completed') throw new Error(`a job ended ${to}`);
    return performance.now() - t0;
  };
  const viaFloor = async () => {
    const t0 = performance.now();
    const outcome = await executor.start(executionOf(prepared, scope), signal);
    if (outcome.status !== 'completed' || !outcome.result.passed) throw new Error('the floor job did not pass');
    return performance.now() - t0;
  };
  /** The service's pieces called in sequence by hand: what the service adds beyond them is its own. */
  const stages = { prepare: [], create: [], running: [], executor: [], completed: [] };
  const viaParts = async () => {
    const t = [performance.now()];
    const ready = await pool.prepare(request, LIMITS);
    t.push(performance.now());
    const record = await directStore.createEvaluation(partsScope, ready);
    t.push(performance.now());
    await directStore.transition(partsScope, record.job_id, ['queued'], 'running');
    t.push(performance.now());
    const outcome = await executor.start({ ...executionOf(ready, partsScope), job_id: record.job_id }, signal);
    t.push(performance.now());
    await directStore.transition(partsScope, record.job_id, ['running'], 'completed', { result: frozenJsonCopy(outcome.result) });
    t.push(performance.now());
    Object.values(stages).forEach((list, i) => list.push(t[i + 1] - t[i]));
    return t[5] - t[0];
  };
  const sequential = (fn) => async (n) => {
    const latencies = [];
    for (let i = 0; i < n; i++) latencies.push(await fn());
    return latencies;
  };
  const parallel = (fn) => async (n) => void (await inFlight(n, 4, fn));
  let rows;
  try {
    rows = await contest([
      { key: 's1', label: 'EvalService, 1 in flight', n: JOBS, run: sequential(viaService) },
      { key: 'f1', label: 'LocalEvalExecutor.start, 1 in flight (floor)', n: JOBS, run: sequential(viaFloor) },
      { key: 'p1', label: 'the pieces by hand, 1 in flight (pool.prepare, createEvaluation, →running, executor, →completed)', n: JOBS, run: sequential(viaParts) },
      { key: 's4', label: 'EvalService, 4 in flight (maxConcurrency 4)', n: JOBS, run: parallel(viaService) },
      { key: 'f4', label: 'LocalEvalExecutor.start, 4 in flight (floor)', n: JOBS, run: parallel(viaFloor) },
    ]);
    check(terminals.unexpected === 0 && terminals.waiters.length === 0, 'a terminal transition had no waiter');
    // every submitted job is stored completed, and its result passed
    let jobs = 0;
    let cursor;
    let last;
    do {
      const page = await service.listJobs(scope, { limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const job of page.items) check(job.phase === 'completed' && job.revision === 2, `job ${job.phase} at revision ${job.revision}`);
      jobs += page.items.length;
      last = page.items.at(-1) ?? last;
      cursor = page.next_cursor;
    } while (cursor);
    check(jobs === submitted, `${jobs} jobs stored, ${submitted} submitted`);
    check((await service.result(scope, last.job_id)).passed === true, 'a stored result did not pass');
  } finally {
    await service.stop();
  }
  const { s1, f1, p1, s4, f4 } = rows;
  console.log(`\n### (2) Job overhead: a 10-case job through \`EvalService.submit\` → \`completed\` against \`LocalEvalExecutor.start\` on the same job\n`);
  console.log(`Each case: 2 model calls of a deterministic model, 1 tool call, in-memory sessions. Terminal transition from the telemetry sink. ${ROUNDS} rounds of one block of ${JOBS} jobs per contestant, order rotated; median block; ms per job (4 in flight: block time / jobs, i.e. 1 / throughput). CPU is the whole process (preparation threads included; Postgres not).\n`);
  console.log('| Contestant | wall/job | cpu/job | cpu IQR |');
  console.log('|---|---|---|---|');
  for (const r of [s1, f1, p1, s4, f4]) console.log(`| ${r.label} | ${f(r.wall)} | ${f(r.cpu)} | ${f(r.iqr * 100, 0)} % |`);
  const over = (s, fl) => `${f(s.wall - fl.wall)} ms wall, ${f(s.cpu - fl.cpu)} ms cpu per job; service / floor **${x(pairedRatio(s, fl, 'wall'))}** wall (median of per-round ratios; ${x(s.wall / fl.wall)} of the medians), ${x(pairedRatio(s, fl, 'cpu'))} cpu`;
  console.log(`\n- 1 in flight: overhead ${over(s1, f1)}`);
  console.log(`- 4 in flight: overhead ${over(s4, f4)}`);
  console.log(`- the pieces by hand (1 in flight) cost ${f(p1.wall - f1.wall)} ms over the floor; service − pieces ${f(s1.wall - p1.wall)} ms (medians), service / pieces ${x(pairedRatio(s1, p1, 'wall'))} (median of per-round ratios)`);
  const stage = (key) => `${f(median(stages[key]))} (p95 ${f(quantile(stages[key], 0.95))})`;
  console.log(`- the pieces by hand, median ms per stage over all their jobs (warm-up included): pool.prepare ${stage('prepare')}, createEvaluation ${stage('create')}, →running ${stage('running')}, executor ${stage('executor')}, frozenJsonCopy(result) + →completed ${stage('completed')}`);
  console.log(`- one job submit → terminal, 1 in flight (${s1.latencies.length} jobs): median ${f(median(s1.latencies))} ms, p95 ${f(quantile(s1.latencies, 0.95))} ms; floor median ${f(median(f1.latencies))} ms, p95 ${f(quantile(f1.latencies, 0.95))} ms`);
}

// ---- (3) store --------------------------------------------------------------------------------------

const SCRATCH = 'bench_eval_scratch_jobs';

async function partStore(dataSource) {
  const pg = dataSource.driver.master;
  await pg.query(`CREATE TABLE ${SCRATCH} (job_id text PRIMARY KEY, scope_app text NOT NULL, phase text NOT NULL, revision bigint NOT NULL, metrics jsonb NOT NULL, options jsonb NOT NULL, metadata jsonb NOT NULL, request_bytes integer NOT NULL, result jsonb, created_at_ms bigint NOT NULL, updated_at_ms bigint NOT NULL, started_at_ms bigint, finished_at_ms bigint)`);
  const store = new PostgresEvalStore(dataSource);
  const scope = { app: 'bench-store' };
  const prepared = preparedInProcess(jobRequest(10));
  const outcome = await new LocalEvalExecutor(registry).start(executionOf(prepared, scope), new AbortController().signal);
  const result = frozenJsonCopy(outcome.result);
  const texts = [JSON.stringify(prepared.metrics), JSON.stringify(prepared.options), JSON.stringify(prepared.metadata)];
  const resultText = JSON.stringify(result);
  let created = 0;
  const viaStore = async () => {
    const record = await store.createEvaluation(scope, prepared);
    await store.transition(scope, record.job_id, ['queued'], 'running');
    await store.transition(scope, record.job_id, ['running'], 'completed', { result });
    created++;
  };
  const viaScratch = async () => {
    const id = newJobId();
    const now = Date.now();
    await pg.query(`INSERT INTO ${SCRATCH} (job_id, scope_app, phase, revision, metrics, options, metadata, request_bytes, created_at_ms, updated_at_ms) VALUES ($1, $2, 'queued', 0, $3, $4, $5, $6, $7, $7)`, [id, scope.app, ...texts, prepared.request_bytes, now]);
    await pg.query(`UPDATE ${SCRATCH} SET phase = 'running', revision = revision + 1, started_at_ms = $2, updated_at_ms = $2 WHERE job_id = $1 AND phase = 'queued'`, [id, Date.now()]);
    await pg.query(`UPDATE ${SCRATCH} SET phase = 'completed', revision = revision + 1, result = $2, finished_at_ms = $3, updated_at_ms = $3 WHERE job_id = $1 AND phase = 'running'`, [id, resultText, Date.now()]);
  };
  const sequential = (fn) => async (n) => {
    for (let i = 0; i < n; i++) await fn();
  };
  const parallel = (fn) => async (n) => inFlight(n, 4, fn);
  const rows = await contest([
    { key: 'st1', label: 'PostgresEvalStore: createEvaluation + →running + →completed, 1 at a time', n: STORE_JOBS, run: sequential(viaStore) },
    { key: 'fl1', label: '3 plain statements (INSERT, UPDATE, UPDATE) on a scratch table, 1 at a time (floor)', n: STORE_JOBS, run: sequential(viaScratch) },
    { key: 'st4', label: 'PostgresEvalStore, 4 jobs at once', n: STORE_JOBS, run: parallel(viaStore) },
    { key: 'fl4', label: '3 plain statements, 4 jobs at once (floor)', n: STORE_JOBS, run: parallel(viaScratch) },
  ]);
  // untimed: one more block of each 4-at-once contestant while another connection samples pg_stat_activity
  const waits = { store: await lockWaits(dataSource, () => parallel(viaStore)(STORE_JOBS)), floor: await lockWaits(dataSource, () => parallel(viaScratch)(STORE_JOBS)) };
  const [{ count }] = (await pg.query(`SELECT count(*)::int AS count FROM agent_runtime_eval_jobs WHERE scope_app = $1 AND phase = 'completed' AND revision = 2 AND result IS NOT NULL`, [scope.app])).rows;
  check(count === created, `${count} completed jobs stored, ${created} written`);
  const [{ settings }] = (await pg.query(`SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) AS settings FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'server_version')`)).rows;
  const { st1, fl1, st4, fl4 } = rows;
  console.log(`\n### (3) Store: one job's lifecycle (createEvaluation + queued→running→completed) against 3 plain single-row statements\n`);
  console.log(`Same pool (max 10), same database (${settings}). The job is the 10-case request of (2) (set revision stored once, then verified by digest), the result that of a real run (${int(Buffer.byteLength(resultText))} bytes of JSON); the floor writes the same JSON texts. ${ROUNDS} rounds of one block of ${STORE_JOBS} jobs per contestant, order rotated; median block.\n`);
  console.log('| Contestant | jobs/s | ms/job (wall) | cpu ms/job | cpu IQR |');
  console.log('|---|---|---|---|---|');
  for (const r of [st1, fl1, st4, fl4]) console.log(`| ${r.label} | ${int(1000 / r.wall)} | ${f(r.wall, 3)} | ${f(r.cpu, 3)} | ${f(r.iqr * 100, 0)} % |`);
  console.log(`\n- 1 at a time: store / floor **${x(pairedRatio(st1, fl1, 'wall'))}** wall per job (median of per-round ratios; ${x(st1.wall / fl1.wall)} of the medians), ${x(pairedRatio(st1, fl1, 'cpu'))} cpu`);
  console.log(`- 4 at once: store / floor **${x(pairedRatio(st4, fl4, 'wall'))}** wall per job (${x(st4.wall / fl4.wall)} of the medians), ${x(pairedRatio(st4, fl4, 'cpu'))} cpu; 4 at once / 1 at a time: store ${x(st1.wall / st4.wall)} the throughput, floor ${x(fl1.wall / fl4.wall)}`);
  for (const [label, w] of [['store', waits.store], ['floor', waits.floor]]) {
    console.log(`- 4 at once, ${label} (one untimed block, ${w.samples} samples of pg_stat_activity): on average ${f(w.active)} of its sessions busy, ${f(w.lock)} of them waiting for a lock`);
  }
}

/** Runs `work` while a connection of its own samples the bench database's sessions: mean busy and lock-waiting. */
async function lockWaits(dataSource, work) {
  const monitor = new Client({ connectionString: dataSource.options.url });
  await monitor.connect();
  const database = (await monitor.query('SELECT current_database() AS name')).rows[0].name;
  const totals = { samples: 0, active: 0, lock: 0 };
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const [row] = (await monitor.query(`SELECT count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS lock, count(*) FILTER (WHERE state NOT IN ('idle'))::int AS active FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [database])).rows;
      totals.samples++;
      totals.active += row.active;
      totals.lock += row.lock;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await sampling;
    await monitor.end();
  }
  return { samples: totals.samples, active: totals.active / Math.max(1, totals.samples), lock: totals.lock / Math.max(1, totals.samples) };
}

// ---- main ------------------------------------------------------------------------------------------

async function main() {
  const started = performance.now();
  const server = await openServer();
  const name = `agent_runtime_bench_${randomBytes(6).toString('hex')}`;
  await onServer(server.url, `CREATE DATABASE ${name}`);
  const dataSource = createAgentRuntimeDataSource(withDatabase(server.url, name), { extra: { max: 10 } });
  const poolOptions = resolvePreparationOptions(undefined);
  const pool = new RequestPreparationPool(poolOptions);
  poolNote = `${poolOptions.threads} thread${poolOptions.threads > 1 ? 's' : ''} (the default, min(4, cores)), maxPending ${poolOptions.maxPending}, timeout ${poolOptions.taskTimeoutMs} ms, heap ${poolOptions.maxOldGenerationSizeMb} MiB`;
  try {
    await dataSource.initialize();
    await dataSource.runMigrations();
    await pool.start();
    console.log(`## Evaluation service benchmark\n`);
    console.log(`- date: ${new Date().toISOString()}; node ${process.version}; ${availableParallelism()} × ${cpus()[0]?.model.trim()}; load at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}; commit ${gitCommit()}`);
    console.log(`- Postgres: ${server.source}; options: rounds ${ROUNDS}, small ${SMALL_PAIRS}, near ${NEAR_PAIRS}, submits ${SUBMITS}, jobs ${JOBS}, store-jobs ${STORE_JOBS}${args.only ? `, only ${args.only}` : ''}`);
    if (runs('prep')) await partPreparation(dataSource, pool);
    if (runs('jobs')) await partJobs(dataSource, pool);
    if (runs('store')) await partStore(dataSource);
    console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s, load at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    await pool.destroy().catch(() => undefined);
    if (dataSource.isInitialized) await dataSource.destroy();
    await onServer(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
