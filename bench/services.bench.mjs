// Runtime service bundle benchmark (spec 07), peers and floors side by side in one run:
//   (1) warm path: artifactService.loadArtifact / saveArtifact and memoryService.searchMemory through the
//       ephemeral bundle (generation guard + scope router + in-memory adapter) against the same adapter
//       called directly on the same data (floor), with a bare ScopeRouter between them;
//   (2) durable: saveArtifact + loadArtifact of a 4 KiB artifact through the durable bundle against the
//       PostgresArtifactAdapter directly (router cost on a durable path; also with the call options the router
//       passes) and against one plain INSERT + SELECT of a bytea row on a scratch table (database cost), with
//       1 and 8 concurrent scopes;
//   (3) outbox: enqueue → completed of 1-event jobs (processor concurrency 4, poll 20 ms), one at a time
//       and in bursts, against the same number of plain INSERT + UPDATE statements.
// Run `npm run bench:services` (builds first); method and figures: bench/RESULTS.md, "Runtime service bundle".
//
//   node bench/services.bench.mjs [--rounds 21] [--batch-ms 20] [--warm-bytes 1024] [--entries 50]
//                                 [--durable-rounds 15] [--pairs 30] [--latency-jobs 30] [--burst 200]
//                                 [--bursts 7] [--only warm|durable|outbox]
//
// DATABASE_URL: that server (a database of its own is created and dropped); else a throw-away embedded
// server (fsync=off), as in the other database benchmarks.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { median, pairedRatio, summary } from './stats.mjs';
import { benchArgs } from './args.mjs';
import { onServer, openServer, withDatabase } from './database.mjs';
import { gitCommit } from './run-info.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const { createAgentRuntimeDataSource } = require('../dist/src/database/data-source.factory.js');
const { poolOf } = require('../dist/src/database/postgres-pool.js');
const { createRuntimeServices } = require('../dist/src/services/bundle/runtime-services-factory.js');
const { InMemoryArtifactAdapter } = require('../dist/src/services/artifacts/in-memory-artifact-adapter.js');
const { PostgresArtifactAdapter } = require('../dist/src/services/artifacts/postgres-artifact-adapter.js');
const { InMemoryMemoryAdapter } = require('../dist/src/services/memory/in-memory-memory-adapter.js');
const { ScopeRouter } = require('../dist/src/services/router/scope-router.js');
const { checkArtifactScope, scopeKey } = require('../dist/src/services/service-scope.js');
const { TelemetryEvents } = require('../dist/src/telemetry/telemetry-events.js');
const MEMORY_OUTBOX_JOB_EVENT = TelemetryEvents.memoryOutboxJob;

const args = benchArgs(['rounds', 'batch-ms', 'warm-bytes', 'entries', 'durable-rounds', 'pairs', 'latency-jobs', 'burst', 'bursts', 'only']);
const ROUNDS = Number(args.rounds ?? 21);
const BATCH_MS = Number(args['batch-ms'] ?? 20);
const WARMUP_MS = 200;
const WARM_BYTES = Number(args['warm-bytes'] ?? 1024);
const ENTRIES = Number(args.entries ?? 50);
const DURABLE_ROUNDS = Number(args['durable-rounds'] ?? 15);
const PAIRS = Number(args.pairs ?? 30);
const LATENCY_JOBS = Number(args['latency-jobs'] ?? 30);
const BURST = Number(args.burst ?? 200);
const BURSTS = Number(args.bursts ?? 7);
const PARTS = ['warm', 'durable', 'outbox'];
if (args.only !== undefined && !PARTS.includes(args.only)) throw new Error(`--only: one of ${PARTS.join(', ')}`);
const runs = (part) => args.only === undefined || args.only === part;

const DURABLE_BYTES = 4096;
const OUTBOX_CONCURRENCY = 4;
const OUTBOX_SCOPES = 16;
/** Jobs per enqueuer in a burst, so that a burst is a whole number of jobs per enqueuer. */
const BURST_EACH = Math.ceil(BURST / OUTBOX_CONCURRENCY);
const BURST_JOBS = BURST_EACH * OUTBOX_CONCURRENCY;

// ---- small helpers ---------------------------------------------------------------------------------

const f = (n, digits = 2) => n.toFixed(digits);
const x = (n) => `${n.toFixed(2)}×`;
const int = (n) => Math.round(n).toLocaleString('en-US');
const us = (ns) => f(ns / 1e3, ns >= 1e5 ? 0 : ns >= 1e4 ? 1 : 2);
/** Nearest-rank quantile. */
const quantile = (values, p) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * values.length) - 1)];
const check = (condition, message) => {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
};
const cpuNow = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
let blackhole = 0;

/** A fixed-seed PRNG (mulberry32), so every run searches the same texts. */
function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stored-looking `user_message` event holding `text`. */
function sessionEvent(text, seq) {
  return { event_id: `evt-${randomBytes(8).toString('hex')}`, invocation_id: 'inv-bench', author: 'user', kind: 'user_message', content: { role: 'user', parts: [{ text }] }, session_id: 'ses-bench', seq, created_at_ms: 1_700_000_000_000 + seq };
}

/** Counts the statements sent by pg clients: per async context (ALS) and in total. */
const statementCounter = new AsyncLocalStorage();
const statementTotals = { all: 0 };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...rest) {
  statementTotals.all++;
  const store = statementCounter.getStore();
  if (store !== undefined) store.count++;
  return originalQuery.apply(this, rest);
};
/** Statements sent by `work()` and what it awaits (background loops of the bundle not counted). */
async function statementsOf(work) {
  const store = { count: 0 };
  await statementCounter.run(store, work);
  return store.count;
}

// ---- (1) warm path ---------------------------------------------------------------------------------

/** Wall and CPU ns per operation over one batch; `prepare`/`cleanup` run outside the clock. */
async function timeBatch(contestant, ops) {
  const go = contestant.prepare(ops);
  const cpu0 = cpuNow();
  const t0 = process.hrtime.bigint();
  await go();
  const wall = Number(process.hrtime.bigint() - t0) / ops;
  const cpu = ((cpuNow() - cpu0) * 1e3) / ops;
  await contestant.cleanup?.();
  return { wall, cpu };
}

/** Runs the contestant for WARMUP_MS (JIT), and returns the batch size for about `BATCH_MS`. */
async function warmUp(contestant, maxSize) {
  const t0 = performance.now();
  let ops = 0;
  let size = 1;
  do {
    await contestant.prepare(size)();
    await contestant.cleanup?.();
    ops += size;
    size = Math.min(size * 2, maxSize);
  } while (performance.now() - t0 < WARMUP_MS);
  return Math.max(1, Math.min(maxSize, Math.round(BATCH_MS / ((performance.now() - t0) / ops))));
}

async function fastContest(contestants, maxSize = 20_000) {
  const sizes = [];
  for (const c of contestants) sizes.push(await warmUp(c, maxSize));
  const samples = contestants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + round) % contestants.length;
      samples[i][round] = await timeBatch(contestants[i], sizes[i]);
    }
  }
  return Object.fromEntries(contestants.map((c, i) => [c.key, { ...c, ops: sizes[i], samples: samples[i], ...summary(samples[i]) }]));
}

/** `ops` sequential awaited calls of `call()`; `verify(result)` must hold for each. */
const loop = (call, verify) => (ops) => async () => {
  for (let i = 0; i < ops; i++) blackhole += verify(await call()) ? 1 : -1e9;
};

/** The settings the ephemeral profile gives a component's router (spec 07 §3 defaults). */
function bareArtifactRouter(adapter) {
  return new ScopeRouter({
    kind: 'artifact',
    routing: 'shared',
    durable: false,
    adapterId: adapter.id,
    maxActiveScopes: 1024,
    maxRouterQueue: 256,
    idleScopeTimeoutMs: 60_000,
    callTimeoutMs: 30_000,
    checkScope: checkArtifactScope,
    keyOf: (scope) => scopeKey('artifact', scope),
    openScope: async () => undefined,
    adapterFailure: 'artifact_shard_adapter_failed',
  });
}

function memoryTexts(count) {
  const random = prng(11);
  const vocabulary = Array.from({ length: 200 }, (_, i) => `w${i.toString(36)}${'xyz'[i % 3]}`);
  return Array.from({ length: count }, () => Array.from({ length: 12 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' '));
}

async function partWarm() {
  const supervisor = createRuntimeServices('ephemeral_local', {});
  await supervisor.start();
  try {
    const { artifactService, memoryService } = supervisor.services();
    const direct = new InMemoryArtifactAdapter();
    const routed = new InMemoryArtifactAdapter();
    const router = bareArtifactRouter(routed);
    await router.start();
    const data = new Uint8Array(randomBytes(WARM_BYTES));
    const scope = { appName: 'bench-warm', userId: 'alice', sessionId: 'ses-1' };
    const saveRequest = { ...scope, filename: 'save.bin', artifact: { data, mimeType: 'application/octet-stream' } };
    const loadRequest = { ...scope, filename: 'load.bin' };
    const targets = {
      bundle: { save: (r) => artifactService.saveArtifact(r), load: (r) => artifactService.loadArtifact(r), remove: (r) => artifactService.deleteArtifact(r) },
      router: { save: (r) => router.run(r, (_s, call) => routed.saveArtifact(r, call)), load: (r) => router.run(r, (_s, call) => routed.loadArtifact(r, call)), remove: (r) => routed.deleteArtifact(r) },
      adapter: { save: (r) => direct.saveArtifact(r), load: (r) => direct.loadArtifact(r), remove: (r) => direct.deleteArtifact(r) },
    };
    for (const t of Object.values(targets)) check((await t.save({ ...loadRequest, artifact: saveRequest.artifact })) === 1, 'the load artifact is not version 1');
    const isLoaded = (record) => record?.version === 1 && record.size_bytes === WARM_BYTES;
    const isVersion = (version) => Number.isSafeInteger(version) && version >= 1;

    // memory: the same events in the bundle's adapter and in a direct one
    const memoryScope = { appName: 'bench-warm', userId: 'alice' };
    const texts = memoryTexts(ENTRIES);
    const events = texts.map((text, i) => sessionEvent(text, i + 1));
    const memoryDirect = new InMemoryMemoryAdapter();
    check((await memoryService.addEvents(memoryScope, events, { epoch: 0 })).added === ENTRIES, 'bundle memory fill');
    check((await memoryDirect.addEvents(memoryScope, events, { epoch: 0 })).added === ENTRIES, 'direct memory fill');
    const query = texts[ENTRIES >> 1].split(' ').slice(0, 3).join(' ');
    const searchRequest = { ...memoryScope, query, limit: 5 };
    const viaBundle = await memoryService.searchMemory(searchRequest);
    const viaAdapter = await memoryDirect.searchMemory(searchRequest);
    check(viaBundle.memories.length === 5 && JSON.stringify(viaBundle.memories.map((m) => m.content)) === JSON.stringify(viaAdapter.memories.map((m) => m.content)), 'bundle and adapter search disagree');
    const isHits = (result) => result.memories.length === 5;

    const saveContestant = (key, label, target) => ({ key, label, prepare: loop(() => target.save(saveRequest), isVersion), cleanup: () => target.remove({ ...scope, filename: 'save.bin' }) });
    const rows = await fastContest([
      { key: 'load-bundle', label: '`artifactService.loadArtifact` (ephemeral bundle)', prepare: loop(() => targets.bundle.load(loadRequest), isLoaded) },
      { key: 'load-router', label: '`ScopeRouter.run` → adapter.loadArtifact (bare router, shared)', prepare: loop(() => targets.router.load(loadRequest), isLoaded) },
      { key: 'load-adapter', label: '`InMemoryArtifactAdapter.loadArtifact` directly (floor)', prepare: loop(() => targets.adapter.load(loadRequest), isLoaded) },
      saveContestant('save-bundle', '`artifactService.saveArtifact` (ephemeral bundle)', targets.bundle),
      saveContestant('save-router', '`ScopeRouter.run` → adapter.saveArtifact (bare router, shared)', targets.router),
      saveContestant('save-adapter', '`InMemoryArtifactAdapter.saveArtifact` directly (floor)', targets.adapter),
      { key: 'search-bundle', label: '`memoryService.searchMemory` (ephemeral bundle)', prepare: loop(() => memoryService.searchMemory(searchRequest), isHits) },
      { key: 'search-adapter', label: '`InMemoryMemoryAdapter.searchMemory` directly (floor)', prepare: loop(() => memoryDirect.searchMemory(searchRequest), isHits) },
      { key: 'noop-router', label: '`ScopeRouter.run(scope, async () => 1)` (the router alone)', prepare: loop(() => router.run(scope, async () => 1), (v) => v === 1) },
      { key: 'noop-floor', label: '`await (async () => 1)()`', prepare: loop(async () => 1, (v) => v === 1) },
    ]);
    await router.stop();

    console.log(`\n### (1) Warm path: the ephemeral bundle against its in-memory adapter called directly\n`);
    console.log(`One scope (worker warm), calls one after another, each awaited. Artifact ${int(WARM_BYTES)} bytes (load: version 1 of another file, copied out per call; save: a new version per call, all versions deleted after each batch outside the clock). Search: ${ENTRIES} entries of 12 words in the scope, a 3-word query, limit 5. ${ROUNDS} rounds of a ~${BATCH_MS} ms batch per contestant after a ${WARMUP_MS} ms warm-up, order rotated per round; median batch; µs per call. CPU is the whole process.\n`);
    console.log('| Contestant | calls/batch | wall µs/call | cpu µs/call | cpu IQR |');
    console.log('|---|---|---|---|---|');
    for (const r of Object.values(rows)) console.log(`| ${r.label} | ${int(r.ops)} | ${us(r.wall)} | ${us(r.cpu)} | ${f(r.iqr * 100, 0)} % |`);
    console.log('');
    for (const op of ['load', 'save', 'search']) {
      const b = rows[`${op}-bundle`];
      const a = rows[`${op}-adapter`];
      const r = rows[`${op}-router`];
      const viaRouter = r ? `; bare router / adapter ${x(pairedRatio(r, a, 'wall'))} wall, ${x(pairedRatio(r, a, 'cpu'))} cpu (+${us(r.wall - a.wall)} µs); bundle − bare router ${us(b.wall - r.wall)} µs` : '';
      console.log(`- ${op}: bundle / adapter **${x(pairedRatio(b, a, 'wall'))}** wall, ${x(pairedRatio(b, a, 'cpu'))} cpu (median of per-round ratios); overhead ${us(b.wall - a.wall)} µs wall, ${us(b.cpu - a.cpu)} µs cpu per call${viaRouter}`);
    }
    console.log(`- the router alone (no-op operation): ${us(rows['noop-router'].wall)} µs wall, ${us(rows['noop-router'].cpu)} µs cpu per call; an awaited async no-op ${us(rows['noop-floor'].wall)} µs`);
  } finally {
    await supervisor.stop();
  }
}

// ---- blocks of database work (parts 2 and 3) ------------------------------------------------------------

/** `DURABLE_ROUNDS` rounds; each runs every contestant's block once, order rotated; ms per op. */
async function blockContest(contestants, rounds) {
  for (const c of contestants) await c.block(); // warm-up, not recorded
  const samples = contestants.map(() => []);
  const latencies = contestants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + round) % contestants.length;
      const cpu0 = cpuNow();
      const t0 = performance.now();
      const { ops, latencies: l } = await contestants[i].block();
      const wall = (performance.now() - t0) / ops;
      samples[i][round] = { wall, cpu: (cpuNow() - cpu0) / 1e3 / ops };
      latencies[i].push(...l);
    }
  }
  return Object.fromEntries(contestants.map((c, i) => [c.key, { ...c, samples: samples[i], latencies: latencies[i], ...summary(samples[i]) }]));
}

/** `workers` async loops of `each` calls of `pair(worker)`; latencies in ms. */
async function concurrently(workers, each, pair) {
  const latencies = [];
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < each; i++) {
        const t0 = performance.now();
        await pair(w);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { ops: workers * each, latencies };
}

// ---- (2) durable artifacts ---------------------------------------------------------------------------

const ARTIFACT_SCRATCH = 'bench_services_scratch_blobs';

async function partDurable(dataSource) {
  const pool = poolOf(dataSource);
  await pool.query(`CREATE TABLE ${ARTIFACT_SCRATCH} (id bigserial PRIMARY KEY, scope text NOT NULL, data bytea NOT NULL)`);
  const supervisor = createRuntimeServices('durable_local', {}, { dataSource });
  await supervisor.start();
  try {
    const { artifactService } = supervisor.services();
    const adapter = new PostgresArtifactAdapter(dataSource);
    const data = new Uint8Array(randomBytes(DURABLE_BYTES));
    const buffer = Buffer.from(data);
    /** What the router hands the adapter on every call: a signal and the time left (here the default callTimeoutMs). */
    const routerLike = Object.freeze({ signal: new AbortController().signal, timeoutMs: 30_000 });
    const viaService = (service, user, call) => async (w) => {
      const request = { appName: 'bench-durable', userId: `${user}-${w}`, filename: 'blob.bin' };
      const version = await service.saveArtifact({ ...request, artifact: { data, mimeType: 'application/octet-stream' } }, call);
      const record = await service.loadArtifact(request, call);
      check(record?.version === version && record.size_bytes === DURABLE_BYTES && record.data.byteLength === DURABLE_BYTES, 'the loaded artifact is not the one saved');
    };
    const viaFloor = async (w) => {
      const { rows } = await pool.query(`INSERT INTO ${ARTIFACT_SCRATCH} (scope, data) VALUES ($1, $2) RETURNING id`, [`floor-${w}`, buffer]);
      const loaded = await pool.query(`SELECT data FROM ${ARTIFACT_SCRATCH} WHERE id = $1`, [rows[0].id]);
      check(loaded.rows[0].data.length === DURABLE_BYTES, 'the floor row came back short');
    };
    const pairs = { bundle: viaService(artifactService, 'bundle'), timed: viaService(adapter, 'timed', routerLike), adapter: viaService(adapter, 'adapter'), floor: viaFloor };
    const labels = {
      bundle: 'durable bundle: `saveArtifact` + `loadArtifact`',
      timed: '`PostgresArtifactAdapter` directly, with `{signal, timeoutMs: 30000}` as the router passes',
      adapter: '`PostgresArtifactAdapter` directly, no call options (router floor)',
      floor: 'INSERT + SELECT of a bytea row (database floor)',
    };
    const contestants = [];
    for (const workers of [1, 8]) {
      for (const [name, pair] of Object.entries(pairs)) {
        contestants.push({ key: `${name}${workers}`, label: `${labels[name]}, ${workers} scope${workers > 1 ? 's' : ''} at once`, block: () => concurrently(workers, workers === 1 ? PAIRS : Math.ceil(PAIRS / 2), pair) });
      }
    }
    const rows = await blockContest(contestants, DURABLE_ROUNDS);
    const trips = {};
    for (const [name, pair] of Object.entries(pairs)) trips[name] = (await statementsOf(async () => { for (let i = 0; i < 20; i++) await pair(0); })) / 20;
    const [{ settings }] = (await pool.query(`SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) AS settings FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'server_version')`)).rows;

    console.log(`\n### (2) Durable: \`saveArtifact\` + \`loadArtifact\` of a ${int(DURABLE_BYTES)}-byte artifact\n`);
    console.log(`One DataSource (pool max 10; ${settings}) for all four. Each scope is a worker loop doing save-then-load-latest on its own scope (user-level, one filename; the versions pile up); 1 scope: ${PAIRS} pairs per block, 8 scopes: ${Math.ceil(PAIRS / 2)} pairs each. ${DURABLE_ROUNDS} rounds after one warm-up block, order rotated; median block; ms per pair = block time / pairs (1 / throughput). CPU is the Node process (Postgres not counted). Round trips: pg \`Client#query\` calls per pair, counted on one scope outside the timed blocks.\n`);
    console.log('| Contestant | pairs/s | ms/pair | cpu ms/pair | pair latency p50 / p95 ms | round trips/pair |');
    console.log('|---|---|---|---|---|---|');
    for (const r of Object.values(rows)) {
      const name = r.key.replace(/\d+$/, '');
      console.log(`| ${r.label} | ${int(1000 / r.wall)} | ${f(r.wall, 3)} | ${f(r.cpu, 3)} | ${f(median(r.latencies))} / ${f(quantile(r.latencies, 0.95))} | ${f(trips[name], 1)} |`);
    }
    console.log('');
    for (const workers of [1, 8]) {
      const [b, t, a, fl] = ['bundle', 'timed', 'adapter', 'floor'].map((n) => rows[`${n}${workers}`]);
      console.log(`- ${workers} scope${workers > 1 ? 's' : ''}: bundle / adapter **${x(pairedRatio(b, a, 'wall'))}** wall, ${x(pairedRatio(b, a, 'cpu'))} cpu (router cost: ${f(b.wall - a.wall, 3)} ms wall, ${f(b.cpu - a.cpu, 3)} ms cpu per pair); of it, the adapter with the router's call options / without ${x(pairedRatio(t, a, 'wall'))} wall, ${x(pairedRatio(t, a, 'cpu'))} cpu (${f(t.wall - a.wall, 3)} ms wall), and bundle / that ${x(pairedRatio(b, t, 'wall'))} wall, ${x(pairedRatio(b, t, 'cpu'))} cpu; adapter / database floor **${x(pairedRatio(a, fl, 'wall'))}** wall, ${x(pairedRatio(a, fl, 'cpu'))} cpu; bundle / floor ${x(pairedRatio(b, fl, 'wall'))}`);
    }
    console.log(`- 8 scopes / 1 scope throughput: bundle ${x(rows.bundle1.wall / rows.bundle8.wall)}, adapter ${x(rows.adapter1.wall / rows.adapter8.wall)}, floor ${x(rows.floor1.wall / rows.floor8.wall)}`);
  } finally {
    await supervisor.stop();
  }
}

// ---- (3) outbox --------------------------------------------------------------------------------------

const OUTBOX_SCRATCH = 'bench_services_scratch_jobs';

/** The telemetry sink of the outbox: counts `completed` transitions and wakes whoever waits for a count. */
class Completions {
  completed = 0;
  other = 0;
  waiters = [];
  emit(event, payload) {
    if (event !== MEMORY_OUTBOX_JOB_EVENT || payload.from !== 'running') return;
    if (payload.to !== 'completed') {
      this.other++;
      return;
    }
    this.completed++;
    this.waiters = this.waiters.filter((w) => (this.completed >= w.target ? (w.resolve(), false) : true));
  }
  /** Resolves once `target` jobs have completed in all (30 s at most). */
  reach(target) {
    if (this.completed >= target) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`outbox: ${this.completed} of ${target} jobs completed after 30 s`)), 30_000);
      this.waiters.push({ target, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

/** Runs `work` while a connection of its own samples the database's other sessions: mean busy and lock-waiting. */
async function lockWaits(url, work) {
  const monitor = new pg.Client({ connectionString: url });
  await monitor.connect();
  const totals = { samples: 0, active: 0, lock: 0 };
  /** What the lock-waiting sessions were running: the first words of the statement, by how often seen. */
  const waiting = new Map();
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const { rows } = await monitor.query(`SELECT wait_event_type = 'Lock' AS lock, regexp_replace(left(query, 200), '\\s+', ' ', 'g') AS query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`);
      totals.samples++;
      totals.active += rows.length;
      for (const row of rows.filter((r) => r.lock)) {
        totals.lock++;
        const key = row.query.replace(/"public"\./g, '').slice(0, 110);
        waiting.set(key, (waiting.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  const before = statementTotals.all;
  try {
    await work();
  } finally {
    done = true;
    await sampling;
  }
  const statements = statementTotals.all - before - totals.samples;
  await monitor.end();
  const [top] = [...waiting].sort((a, b) => b[1] - a[1]);
  return { samples: totals.samples, statements, active: totals.active / Math.max(1, totals.samples), lock: totals.lock / Math.max(1, totals.samples), top: top && { query: top[0], share: top[1] / totals.lock } };
}

async function partOutbox(dataSource, url) {
  const pool = poolOf(dataSource);
  await pool.query(`CREATE TABLE ${OUTBOX_SCRATCH} (job_id text PRIMARY KEY, app_name text NOT NULL, user_id text NOT NULL, phase text NOT NULL, events jsonb NOT NULL, created_at_ms bigint NOT NULL, finished_at_ms bigint)`);
  const completions = new Completions();
  const supervisor = createRuntimeServices('durable_local', { memoryOutbox: { pollIntervalMs: 20, processor: { concurrency: OUTBOX_CONCURRENCY } } }, { dataSource, events: completions });
  await supervisor.start();
  let enqueued = 0;
  const runId = randomBytes(4).toString('hex');
  const job = () => {
    const n = enqueued++;
    return { appName: 'bench-outbox', userId: `user-${n % OUTBOX_SCOPES}`, baseJobId: `bench-${runId}-${n}`, events: [sessionEvent(`the deploy key of service ${n} rotates on fridays`, n + 1)] };
  };
  try {
    const { memoryOutbox } = supervisor.services();
    const enqueue = async () => check((await memoryOutbox.enqueue(job())).created, 'a job was not created');
    let floorJobs = 0;
    const floorJob = async () => {
      const request = job();
      const id = `floor-${runId}-${floorJobs++}`;
      await pool.query(`INSERT INTO ${OUTBOX_SCRATCH} (job_id, app_name, user_id, phase, events, created_at_ms) VALUES ($1, $2, $3, 'pending', $4, $5)`, [id, request.appName, request.userId, JSON.stringify(request.events), Date.now()]);
      await pool.query(`UPDATE ${OUTBOX_SCRATCH} SET phase = 'completed', finished_at_ms = $2 WHERE job_id = $1 AND phase = 'pending'`, [id, Date.now()]);
    };
    /** One job enqueued and awaited to `completed` (the telemetry event after its commit). */
    const oneJob = async () => {
      const target = completions.completed + 1;
      await enqueue();
      await completions.reach(target);
    };
    const enqueueMs = [];
    /** A burst of jobs from OUTBOX_CONCURRENCY enqueuers; the block ends when all have completed. */
    const burst = async () => {
      const target = completions.completed + BURST_JOBS;
      const t0 = performance.now();
      await concurrently(OUTBOX_CONCURRENCY, BURST_EACH, enqueue);
      enqueueMs.push(performance.now() - t0);
      await completions.reach(target);
      return { ops: BURST_JOBS, latencies: [] };
    };
    const floorBurst = () => concurrently(OUTBOX_CONCURRENCY, BURST_EACH, floorJob);
    const single = await blockContest(
      [
        { key: 'outbox1', label: 'outbox: enqueue → completed, one job at a time', block: () => concurrently(1, LATENCY_JOBS, oneJob) },
        { key: 'floor1', label: 'INSERT + UPDATE, one job at a time (floor)', block: () => concurrently(1, LATENCY_JOBS, floorJob) },
      ],
      DURABLE_ROUNDS,
    );
    const burstStart = enqueued;
    const bursts = await blockContest(
      [
        { key: 'outbox4', label: `outbox: bursts of ${BURST_JOBS} jobs, ${OUTBOX_CONCURRENCY} enqueuers, processor concurrency ${OUTBOX_CONCURRENCY}`, block: burst },
        { key: 'floor4', label: `INSERT + UPDATE × ${BURST_JOBS}, ${OUTBOX_CONCURRENCY} at once (floor)`, block: floorBurst },
      ],
      BURSTS,
    );
    const burstEnd = enqueued;
    const burstEnqueueMs = median(enqueueMs);
    // untimed: one more burst of each while another connection samples pg_stat_activity; statements counted on every pg client
    const waits = { outbox: await lockWaits(url, burst), floor: await lockWaits(url, floorBurst) };
    const before = statementTotals.all;
    await concurrently(1, 10, oneJob);
    const singleStatements = (statementTotals.all - before) / 10;
    check(completions.other === 0, `${completions.other} deliveries did not complete`);
    const [stored] = (await pool.query(`SELECT count(*) FILTER (WHERE phase = 'completed' AND attempts = 1)::int AS completed, count(*)::int AS jobs FROM agent_runtime_memory_outbox_jobs WHERE job_id LIKE $1`, [`bench-${runId}-%`])).rows;
    check(stored.completed === completions.completed && stored.jobs === stored.completed, `outbox: ${stored.completed} of ${stored.jobs} jobs completed at attempt 1, ${completions.completed} seen`);
    const [{ entries }] = (await pool.query(`SELECT count(*)::int AS entries FROM agent_runtime_memory_entries WHERE app_name = 'bench-outbox'`)).rows;
    check(entries === completions.completed, `${entries} memory entries for ${completions.completed} jobs`);
    const dbLatency = (await pool.query(`SELECT (finished_at_ms - created_at_ms)::float8 AS ms FROM agent_runtime_memory_outbox_jobs WHERE job_id = ANY($1)`, [Array.from({ length: burstEnd - burstStart }, (_, i) => `bench-${runId}-${burstStart + i}`)])).rows.map((row) => row.ms);

    const { outbox1, floor1 } = single;
    const { outbox4, floor4 } = bursts;
    console.log(`\n### (3) Outbox: 1-event jobs, enqueue → completed (processor concurrency ${OUTBOX_CONCURRENCY}, poll 20 ms)\n`);
    console.log(`Durable bundle with \`memoryOutbox: {pollIntervalMs: 20, processor: {concurrency: ${OUTBOX_CONCURRENCY}}}\`, delivering to its Postgres memory adapter (through the memory router); jobs spread over ${OUTBOX_SCOPES} scopes; completion seen through the outbox's \`completed\` telemetry event (emitted after the commit). One at a time: ${DURABLE_ROUNDS} rounds of ${LATENCY_JOBS} jobs per contestant; bursts: ${BURSTS} rounds of ${BURST_JOBS} jobs; order rotated, one warm-up block each; median block. The floor sends the same number of plain single-row statements (INSERT of the job with its events as jsonb, UPDATE to completed) on a scratch table.\n`);
    console.log('| Contestant | jobs/s | ms/job | cpu ms/job | job latency p50 / p95 ms |');
    console.log('|---|---|---|---|---|');
    for (const r of [outbox1, floor1]) console.log(`| ${r.label} | ${int(1000 / r.wall)} | ${f(r.wall, 3)} | ${f(r.cpu, 3)} | ${f(median(r.latencies))} / ${f(quantile(r.latencies, 0.95))} |`);
    console.log(`| ${outbox4.label} | ${int(1000 / outbox4.wall)} | ${f(outbox4.wall, 3)} | ${f(outbox4.cpu, 3)} | ${f(median(dbLatency), 0)} / ${f(quantile(dbLatency, 0.95), 0)} (database clock, created → finished) |`);
    console.log(`| ${floor4.label} | ${int(1000 / floor4.wall)} | ${f(floor4.wall, 3)} | ${f(floor4.cpu, 3)} | |`);
    console.log('');
    console.log(`- one at a time: outbox / floor **${x(pairedRatio(outbox1, floor1, 'wall'))}** wall, ${x(pairedRatio(outbox1, floor1, 'cpu'))} cpu per job (median of per-round ratios); ${f(singleStatements, 1)} statements per job (10 untimed jobs, every pg client of the process, idle polls and health probes included), against the floor's 2`);
    console.log(`- bursts: outbox / floor **${x(pairedRatio(outbox4, floor4, 'wall'))}** wall, ${x(pairedRatio(outbox4, floor4, 'cpu'))} cpu per job; the ${BURST_JOBS} enqueues alone took ${f(burstEnqueueMs, 0)} ms (median burst, warm-up included; ${int((BURST_JOBS * 1000) / burstEnqueueMs)} enqueues/s)`);
    for (const [label, w] of [['outbox', waits.outbox], ['floor', waits.floor]]) {
      const what = label === 'outbox' ? 'enqueue, claims, deliveries, completions, polls, health probes' : 'the bundle idles meanwhile: its polls and probes are counted too';
      console.log(`- one untimed burst, ${label}: ${f(w.statements / BURST_JOBS, 1)} statements per job (every pg client of the process: ${what}); ${w.samples} samples of pg_stat_activity: on average ${f(w.active)} sessions busy, ${f(w.lock)} waiting for a lock${w.top ? `; ${f(w.top.share * 100, 0)} % of the waits in \`${w.top.query}…\`` : ''}`);
    }
  } finally {
    await supervisor.stop();
  }
}

// ---- main ------------------------------------------------------------------------------------------

async function main() {
  const started = performance.now();
  console.log(`## Runtime service bundle benchmark\n`);
  console.log(`- date: ${new Date().toISOString()}; node ${process.version}; ${availableParallelism()} × ${cpus()[0]?.model.trim()}; load at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}; commit ${gitCommit()}`);
  console.log(`- options: rounds ${ROUNDS}, batch-ms ${BATCH_MS}, warm-bytes ${WARM_BYTES}, entries ${ENTRIES}, durable-rounds ${DURABLE_ROUNDS}, pairs ${PAIRS}, latency-jobs ${LATENCY_JOBS}, burst ${BURST}, bursts ${BURSTS}${args.only ? `, only ${args.only}` : ''}`);
  if (runs('warm')) await partWarm();
  if (runs('durable') || runs('outbox')) {
    const server = await openServer();
    const name = `agent_runtime_bench_${randomBytes(6).toString('hex')}`;
    await onServer(server.url, `CREATE DATABASE ${name}`);
    const url = withDatabase(server.url, name);
    const dataSource = createAgentRuntimeDataSource(url, { extra: { max: 10 } });
    try {
      await dataSource.initialize();
      await dataSource.runMigrations();
      console.log(`\nPostgres of parts 2 and 3: ${server.source}.`);
      if (runs('durable')) await partDurable(dataSource);
      if (runs('outbox')) await partOutbox(dataSource, url);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
      await onServer(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await server.stop();
    }
  }
  check(!runs('warm') || blackhole > 0, 'a timed call returned the wrong result');
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s, load at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
