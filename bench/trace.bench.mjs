// Trace-store benchmark (issue 9 acceptance, spec 06 §5): a page-of-one query after cursor n − 2 on a
// store of 1,000,000 events against the same query on a store of 1,000 (target: ≤ 2×, i.e. the query
// costs O(log n + page)), and append throughput into an empty store and into full stores (each append
// evicts one). One process; both stores live side by side, contestants interleaved. Run with
// `npm run bench:trace`; see bench/README.md ("Trace-store benchmark").
//
//   node bench/trace.bench.mjs [--big 1000000] [--small 1000] [--rounds 21] [--batch-ms 20] [--warmup-ms 200]
//
// Memory: the big store holds about 1 GiB of heap. Unless the heap limit is at least 4 GiB, this
// script re-runs itself with `--max-old-space-size=4096` (your node flags reach the child).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { pairedRatio, summary } from './stats.mjs';
import { benchArgs } from './args.mjs';
import { gitCommit } from './run-info.mjs';

const HEAP_MIB = 4096;
if (getHeapStatistics().heap_size_limit < HEAP_MIB * 2 ** 20) {
  if (process.env.TRACE_BENCH_CHILD) throw new Error('re-run did not get a 4 GiB heap');
  const flags = [`--max-old-space-size=${HEAP_MIB}`, ...process.execArgv];
  const child = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, TRACE_BENCH_CHILD: '1' } });
  process.exit(child.status ?? 1);
}

const require = createRequire(import.meta.url);
const { TraceStore } = require('../dist/src/trace/trace-store.js');
const { CursorIndex } = require('../dist/src/trace/state/cursor-index.js');
const { ManualClock } = require('../dist/src/testing/index.js');

const args = benchArgs(['big', 'small', 'rounds', 'batch-ms', 'warmup-ms']);
const BIG = Number(args.big ?? 1_000_000);
const SMALL = Number(args.small ?? 1_000);
const ROUNDS = Number(args.rounds ?? 21);
const BATCH_MS = Number(args['batch-ms'] ?? 20);
const WARMUP_MS = Number(args['warmup-ms'] ?? 200);
const APPEND_ROUNDS = 11;
const APPEND_BATCH_MS = 50;
const TARGET = 2; // big/small, page of one
const FILL_CHUNK = 100_000;

const PRINCIPAL = 'bench-tenant';
const RUN_ID = 'run-bench-1';
const INVOCATION_ID = 'inv-bench-1';
/** Large enough for a million events, and the longest retention (nothing expires during the run). */
const OPTIONS = Object.freeze({ maxEvents: 1_000_000, maxEventsPerPrincipal: 1_000_000, maxBytes: 2 ** 30, maxBytesPerPrincipal: 2 ** 30, retentionMs: 86_400_000 });
/** The big store is full at BIG events (the same options at the default 1,000,000). */
const BIG_OPTIONS = Object.freeze({ ...OPTIONS, maxEvents: BIG, maxEventsPerPrincipal: BIG });
/** The steady-state contestant of small size: full at SMALL events. */
const SMALL_FULL_OPTIONS = Object.freeze({ ...OPTIONS, maxEvents: SMALL, maxEventsPerPrincipal: SMALL });

/** A Runner-style tool-call event (schema 1): identity run_id + invocation_id, so 4 streams hold every record. */
const event = (i) => ({
  event: 'runner.tool.call',
  timestamp_ms: 1_700_000_000_000 + i,
  metadata: { run_id: RUN_ID, invocation_id: INVOCATION_ID, tool: 'lookup', call_id: `call-${i}` },
  attributes: { outcome: 'executed' },
});

/** A store on a ManualClock that never moves: no prune pass fires and nothing expires while measuring. */
const newStore = (options = OPTIONS) => new TraceStore(options, { clock: new ManualClock() });
let seq = 0;
let blackhole = 0;

// ---- filling ---------------------------------------------------------------------------------------

/** Appends `count` events; wall and CPU time in total and per chunk of FILL_CHUNK. */
function fill(store, count) {
  const chunks = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let done = 0; done < count; ) {
    const n = Math.min(FILL_CHUNK, count - done);
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < n; i++) store.appendObservability(PRINCIPAL, event(seq++));
    const c = process.cpuUsage(c0);
    chunks.push({ n, wallMs: performance.now() - w0, cpuMs: (c.user + c.system) / 1e3 });
    done += n;
  }
  const cpu = process.cpuUsage(cpu0);
  return { count, wallMs: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1e3, chunks };
}

// ---- sanity ----------------------------------------------------------------------------------------

function check(condition, message) {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

/** The pages return what they claim: the right cursors, truncated, nothing evicted yet. */
function sanity(store, n, label) {
  const status = store.status();
  check(status.events === n && status.latest_cursor - status.oldest_cursor + 1 === n, `${label}: ${status.events} events held`);
  check(status.streams === 4 && status.counters.capacity_evictions === 0 && status.counters.rejected === 0, `${label}: streams ${status.streams}, counters ${JSON.stringify(status.counters)}`);
  const latest = status.latest_cursor;
  for (const selector of ['all', { run_id: RUN_ID }]) {
    const one = store.query(PRINCIPAL, selector, { afterCursor: latest - 2, limit: 1 });
    check(one.events.length === 1 && one.events[0].cursor === latest - 1 && one.truncated && one.latest_cursor === latest, `${label}: page of one ${JSON.stringify(one).slice(0, 200)}`);
    check(one.events[0].event.metadata.run_id === RUN_ID && one.oldest_available_cursor === status.oldest_cursor, `${label}: page of one holds the wrong record`);
    const page = store.query(PRINCIPAL, selector, { afterCursor: latest - 257, limit: 256 });
    check(page.events.length === 256 && page.events[0].cursor === latest - 256 && page.events[255].cursor === latest - 1 && page.truncated, `${label}: page of 256`);
  }
  return latest;
}

// ---- timing (as in the other benchmarks: warm-up sizes a batch, rounds rotate the order) -----------

/** Wall and CPU ns per operation over one batch of `ops`; preparation is outside the clock. */
function timeBatch(contestant, ops) {
  const go = contestant.prepare(ops);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  go();
  const wall = Number(process.hrtime.bigint() - t0) / ops;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: ((cpu.user + cpu.system) * 1e3) / ops };
}

/** Runs the contestant for `warmupMs` (JIT), and returns the batch size for about `batchMs`. */
function warmUp(contestant, warmupMs, batchMs, maxSize) {
  const t0 = performance.now();
  let ops = 0;
  let size = 1;
  do {
    contestant.prepare(size)();
    ops += size;
    size = Math.min(size * 2, maxSize);
  } while (performance.now() - t0 < warmupMs);
  return Math.max(1, Math.min(maxSize, Math.round(batchMs / ((performance.now() - t0) / ops))));
}

function contest(contestants, { rounds, warmupMs, batchMs, maxSize }) {
  const sizes = contestants.map((c) => warmUp(c, warmupMs, batchMs, maxSize));
  const samples = contestants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + round) % contestants.length;
      samples[i][round] = timeBatch(contestants[i], sizes[i]);
    }
  }
  return contestants.map((c, i) => ({
    ...c,
    ops: sizes[i],
    samples: samples[i],
    ...summary(samples[i]),
  }));
}


// ---- query contestants -----------------------------------------------------------------------------

/** `store.query(principal, selector, {afterCursor, limit})` in a loop; the page is checked each time. */
function queryContestant(key, label, store, selector, afterCursor, limit, expected = afterCursor + limit) {
  return {
    key,
    label,
    prepare: (ops) => () => {
      for (let i = 0; i < ops; i++) {
        const page = store.query(PRINCIPAL, selector, { afterCursor, limit });
        blackhole += page.next_cursor === expected ? 1 : -1e9;
      }
    },
  };
}

/** The stream index alone (what a query searches): the first record after `cursor`. */
function indexContestant(key, label, index, cursor) {
  return {
    key,
    label,
    prepare: (ops) => () => {
      for (let i = 0; i < ops; i++) blackhole += index.after(cursor).next().value === cursor + 1 ? 1 : -1e9;
    },
  };
}

function cursorIndexOf(n) {
  const index = new CursorIndex();
  for (let c = 1; c <= n; c++) index.push(c, c);
  return index;
}

// ---- append contestants ----------------------------------------------------------------------------

/** `ops` appends of prebuilt events into `target()` (called outside the clock). */
function appendContestant(key, label, target) {
  return {
    key,
    label,
    prepare(ops) {
      const store = target();
      const events = Array.from({ length: ops }, () => event(seq++));
      return () => {
        for (let i = 0; i < ops; i++) blackhole += store.appendObservability(PRINCIPAL, events[i]).cursor & 1;
      };
    },
  };
}

// ---- report ----------------------------------------------------------------------------------------

const ns = (n) => (n >= 10_000 ? `${(n / 1e3).toFixed(1)} µs` : n >= 1_000 ? `${(n / 1e3).toFixed(2)} µs` : `${n.toFixed(0)} ns`);
const ratio = (x) => `${x.toFixed(2)}×`;
const pad = (text, width) => String(text).padEnd(width);
const lpad = (text, width) => String(text).padStart(width);
const int = (n) => Math.round(n).toLocaleString('en-US');
const rate = (count, ms) => `${int((count / ms) * 1e3)}/s`;
const verdict = (x) => (x <= TARGET ? 'MET' : 'MISSED');

function printRows(title, rows) {
  console.log(`\n${title}`);
  console.log(`  ${pad('contestant', 58)}${lpad('ops', 8)}${lpad('wall/op', 11)}${lpad('cpu/op', 11)}${lpad('IQR', 6)}`);
  for (const r of rows) console.log(`  ${pad(r.label, 58)}${lpad(r.ops, 8)}${lpad(ns(r.wall), 11)}${lpad(ns(r.cpu), 11)}${lpad(`${(r.iqr * 100).toFixed(0)}%`, 6)}`);
}

// ---- main ------------------------------------------------------------------------------------------

function main() {
  const started = performance.now();
  console.log(
    `trace-store benchmark: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}, commit ${gitCommit()}, ` +
      `heap limit ${(getHeapStatistics().heap_size_limit / 2 ** 30).toFixed(1)} GiB`,
  );
  console.log(`  options ${JSON.stringify(OPTIONS)} (the big store: maxEvents and maxEventsPerPrincipal ${int(BIG)}); ManualClock (never advanced); one principal; every event {run_id, invocation_id} identity, so 4 streams each hold every record`);
  console.log(`  queries: median of ${ROUNDS} batches of ~${BATCH_MS} ms per contestant after a ${WARMUP_MS} ms warm-up, order rotated per round; appends: ${APPEND_ROUNDS} batches of ~${APPEND_BATCH_MS} ms; no forced gc`);

  const small = newStore();
  const smallFill = fill(small, SMALL);
  const big = newStore(BIG_OPTIONS);
  const bigFill = fill(big, BIG);
  const heap = process.memoryUsage();
  const first = bigFill.chunks[0];
  const last = bigFill.chunks[bigFill.chunks.length - 1];
  console.log(`\nfill (events built inline, store empty at the start, no eviction)`);
  console.log(`  ${int(SMALL)} events: ${smallFill.wallMs.toFixed(0)} ms wall, ${smallFill.cpuMs.toFixed(0)} ms cpu`);
  console.log(
    `  ${int(BIG)} events: ${(bigFill.wallMs / 1e3).toFixed(1)} s wall, ${(bigFill.cpuMs / 1e3).toFixed(1)} s cpu = ${rate(BIG, bigFill.wallMs)} wall, ${rate(BIG, bigFill.cpuMs)} cpu; ` +
      `first ${int(first.n)}: ${rate(first.n, first.cpuMs)} cpu, last ${int(last.n)}: ${rate(last.n, last.cpuMs)} cpu`,
  );
  console.log(`  after the fill: heap used ${(heap.heapUsed / 2 ** 20).toFixed(0)} MiB, rss ${(heap.rss / 2 ** 20).toFixed(0)} MiB; big store ${int(big.status().encoded_bytes)} encoded bytes`);

  const n = sanity(big, BIG, 'big');
  const m = sanity(small, SMALL, 'small');
  const run = { run_id: RUN_ID };
  const pairs = [
    ['all, limit 1', 'all', 1, 2],
    ['{run_id}, limit 1', run, 1, 2],
    ['all, limit 256', 'all', 256, 257],
    ['{run_id}, limit 256', run, 256, 257],
  ];
  const queryRows = contest(
    [
      ...pairs.flatMap(([name, selector, limit, back]) => [
        queryContestant(`s ${name}`, `${int(SMALL)}: query(${name}) after n − ${back}`, small, selector, m - back, limit),
        queryContestant(`b ${name}`, `${int(BIG)}: query(${name}) after n − ${back}`, big, selector, n - back, limit),
      ]),
      queryContestant('floor', `${int(BIG)}: query of a stream it never had`, big, { run_id: 'run-none' }, 0, 1, 0),
    ],
    { rounds: ROUNDS, warmupMs: WARMUP_MS, batchMs: BATCH_MS, maxSize: 1 << 20 },
  );
  const smallIndex = cursorIndexOf(SMALL);
  const bigIndex = cursorIndexOf(BIG);
  const indexRows = contest(
    [indexContestant('s index', `CursorIndex of ${int(SMALL)}: after(n − 2).next()`, smallIndex, SMALL - 2), indexContestant('b index', `CursorIndex of ${int(BIG)}: after(n − 2).next()`, bigIndex, BIG - 2)],
    { rounds: ROUNDS, warmupMs: WARMUP_MS, batchMs: BATCH_MS, maxSize: 1 << 22 },
  );
  printRows(`queries (one principal's stream; n = the latest cursor; a page of one returns record n − 1, truncated)`, queryRows);
  printRows('the stream index alone, for scale (what a query binary-searches; no validation, no page record)', indexRows);

  const by = Object.fromEntries([...queryRows, ...indexRows].map((r) => [r.key, r]));
  const ratios = [...pairs.map(([name]) => [name, by[`b ${name}`], by[`s ${name}`]]), ['CursorIndex alone', by['b index'], by['s index']]].map(([name, b, s]) => ({
    name,
    medians: { wall: b.wall / s.wall, cpu: b.cpu / s.cpu },
    paired: { wall: pairedRatio(b, s, 'wall'), cpu: pairedRatio(b, s, 'cpu') },
  }));
  console.log(`\nratio ${int(BIG)} / ${int(SMALL)} events (wall / cpu)`);
  for (const r of ratios) console.log(`  ${pad(r.name, 22)} from the medians ${ratio(r.medians.wall)} / ${ratio(r.medians.cpu)}; median of per-round ratios ${ratio(r.paired.wall)} / ${ratio(r.paired.cpu)}`);

  // Appends last: they move the big store's cursors. Each full-store append evicts its oldest record.
  const smallFull = newStore(SMALL_FULL_OPTIONS);
  fill(smallFull, SMALL);
  const evictionsBefore = big.status().counters.capacity_evictions;
  let fresh;
  const appendRows = contest(
    [
      appendContestant('empty', `a fresh store per batch (empty; options as above)`, () => {
        fresh?.close();
        return (fresh = newStore());
      }),
      appendContestant('full small', `full store of ${int(SMALL)} (maxEvents ${int(SMALL)}), each evicts one`, () => smallFull),
      appendContestant('full big', `the full store of ${int(BIG)}, each evicts one`, () => big),
    ],
    { rounds: APPEND_ROUNDS, warmupMs: WARMUP_MS, batchMs: APPEND_BATCH_MS, maxSize: 100_000 },
  );
  const after = big.status();
  const appended = after.counters.accepted - BIG;
  check(after.events === BIG && after.counters.capacity_evictions - evictionsBefore === appended && appended > 0, `big store after appends: ${after.events} events, ${after.counters.capacity_evictions} evictions, ${appended} appended`);
  check(smallFull.status().events === SMALL && smallFull.status().counters.capacity_evictions > 0, 'the small full store did not evict');
  printRows(`appends (prebuilt schema-1 events; ${int(appended)} appended to the big store in warm-up and rounds)`, appendRows);
  console.log('  throughput (1 / median cpu per append, and 1 / median wall):');
  for (const r of appendRows) console.log(`    ${pad(r.label, 58)}${lpad(`${int(1e9 / r.cpu)}/s`, 10)} cpu${lpad(`${int(1e9 / r.wall)}/s`, 10)} wall`);
  const fullBig = appendRows.find((r) => r.key === 'full big');
  const empty = appendRows.find((r) => r.key === 'empty');
  console.log(`  full ${int(BIG)} / empty: ${ratio(fullBig.cpu / empty.cpu)} cpu (per-round ${ratio(pairedRatio(fullBig, empty, 'cpu'))})`);

  console.log(`\ntarget: a page of one after n − 2 on ${int(BIG)} events ≤ ${TARGET}× the same on ${int(SMALL)} (wall / cpu, per-round ratios)`);
  for (const r of ratios.slice(0, 2)) console.log(`  ${pad(r.name, 22)} ${ratio(r.paired.wall)} / ${ratio(r.paired.cpu)} → ${verdict(r.paired.wall)} / ${verdict(r.paired.cpu)}`);

  check(blackhole > 0, 'a timed query returned the wrong page');
  for (const store of [small, big, smallFull, fresh]) store.close();
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB${blackhole === 0 ? ' ' : ''}`);
}

main();
