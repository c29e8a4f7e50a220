// Runtime-policy benchmark (spec 02 §2.2, §4): `policy.checkTool` beside the `JSON.stringify` floor
// and the `canonicalize` 2.1.0 package, in one process, contestants interleaved. Run with
// `npm run bench:policy`; see bench/README.md.
//
// Memory: the 100 MiB inputs and canonicalize's output need a large heap, so unless the process
// already runs with `--expose-gc` and a heap limit of at least 4 GiB, this script re-runs itself as
// `node --expose-gc --max-old-space-size=4096 [your node flags] bench/policy.bench.mjs [args]`
// (your flags, e.g. `--cpu-prof`, reach the child). Peak RSS is about 1 GiB and is printed at the end;
// the whole run takes 1–3 minutes on 2 cores.
//
// `--only <part>` runs one part: `64k`, `array`, `string` or `members` (handy under `--cpu-prof`).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { median, spread } from './stats.mjs';

const HEAP_MIB = 4096;
if (typeof globalThis.gc !== 'function' || getHeapStatistics().heap_size_limit < HEAP_MIB * 2 ** 20) {
  if (process.env.POLICY_BENCH_CHILD) throw new Error('re-run did not get --expose-gc and a 4 GiB heap');
  const flags = ['--expose-gc', `--max-old-space-size=${HEAP_MIB}`, ...process.execArgv];
  const child = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, POLICY_BENCH_CHILD: '1' },
  });
  process.exit(child.status ?? 1);
}

const require = createRequire(import.meta.url);
const { RuntimePolicy, canonicalJson, measure } = require('../dist/src/policy/index.js');
const canonicalize = require('canonicalize');
const canonicalizeVersion = require('canonicalize/package.json').version;

const SMALL_TARGET_BYTES = 64 * 1024; // (1): arguments just under this
const LARGE_TARGET_BYTES = 100 * 2 ** 20; // (2): arguments just over this
const ALLOW_LIMIT = 2 ** 20; // maxArgumentBytes of (1): large enough to allow
const DENY_LIMIT = 64 * 1024; // maxArgumentBytes of (2)
const REPS = 21; // measured repetitions of a fast operation, after a warm-up
const SLOW_REPS = 5; // measured repetitions of an operation slower than SLOW_MS
const SLOW_MS = 100;
const BATCH_MS = 40; // a fast operation is timed in batches of about this long
const WARMUP_MS = 300;
const PEER_CALLS = 2; // canonicalize on 100 MiB: timed calls, best reported (no warm-up)

const gc = globalThis.gc;
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const runs = (part) => only === null || only === part;
if (only !== null && !['64k', 'array', 'string', 'members'].includes(only)) throw new TypeError(`--only: unknown part ${only}`);

// ---- inputs: JSON text parsed with JSON.parse, as tool arguments arrive --------------------------

let seed = 0x9e3779b9; // mulberry32: the same inputs on every run
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
}
const WORDS = [
  'weather', 'forecast', 'tomorrow', 'rain', 'wind', 'temperature', 'agent', 'tool', 'policy', 'budget',
  'search', 'result', 'index', 'vector', 'embedding', 'document', 'source', 'the', 'of', 'and', 'in',
  'Zürich', 'café', 'naïve', 'résumé', 'Ångström', 'straße', '東京', '天気予報', 'データ', 'поиск',
  'погода', 'αναζήτηση', '😀', '☔',
];
const pick = (list) => list[Math.floor(random() * list.length)];
const sentence = (words) => Array.from({ length: words }, () => pick(WORDS)).join(' ');

/** A search hit as a retrieval tool would be given it back: keys unsorted, strings and numbers. */
function hit(i) {
  return {
    id: `doc-${i}`,
    title: sentence(6),
    url: `https://example.com/docs/${i}?lang=${pick(['en', 'de', 'ja', 'ru'])}`,
    score: Math.round(random() * 1e6) / 1e6,
    rank: i + 1,
    tags: [pick(WORDS), pick(WORDS), pick(WORDS)],
    snippet: sentence(28),
    meta: { lang: pick(['en', 'de', 'ja', 'ru', 'el']), chars: Math.floor(random() * 20000), fresh: random() < 0.5, author: null },
  };
}

/** About 64 KiB of `search` arguments: a query, filters and a page of hits to re-rank. */
function smallArguments() {
  const args = { query: 'weather in Zürich "tomorrow"\n', top_k: 50, filters: { lang: ['en', 'de'], after: '2024-01-01', min_score: 0.25 }, hits: [] };
  const parts = [];
  let bytes = Buffer.byteLength(JSON.stringify(args));
  for (;;) {
    const text = JSON.stringify(hit(parts.length));
    const more = Buffer.byteLength(text) + 1;
    if (bytes + more > SMALL_TARGET_BYTES) break;
    parts.push(text);
    bytes += more;
  }
  return JSON.parse(`${JSON.stringify(args).slice(0, -3)}[${parts.join(',')}]}`);
}

/** 1024 sentences as JSON string bodies (no quotes), with their UTF-8 sizes. */
function sentencePool() {
  const bodies = Array.from({ length: 1024 }, () => JSON.stringify(sentence(14)).slice(1, -1));
  return { bodies, bytes: bodies.map((body) => Buffer.byteLength(body)) };
}

/**
 * Joins `open`, the JSON fragments `part(i, body)` and `close` until the text passes
 * LARGE_TARGET_BYTES, then parses it. `overhead(i)` is the fragment's size beyond its body's.
 */
function largeJson(open, close, part, overhead) {
  const pool = sentencePool();
  const parts = [];
  let bytes = Buffer.byteLength(open) + Buffer.byteLength(close) - 1;
  for (let i = 0; bytes <= LARGE_TARGET_BYTES; i++) {
    const k = i % pool.bodies.length;
    parts.push(part(i, pool.bodies[k]));
    bytes += pool.bytes[k] + overhead(i) + 1;
  }
  return parseTimed(`${open}${parts.join(',')}${close}`, parts.length);
}

/** JSON.parse of `text`, timed: what a server has already paid before any check runs. */
function parseTimed(text, count) {
  const t0 = process.hrtime.bigint();
  const value = JSON.parse(text);
  return { value, count, parseNs: Number(process.hrtime.bigint() - t0) };
}

const LARGE_SHAPES = [
  {
    part: 'array',
    describe: (n) => `{query, hits: array of ${n.toLocaleString('en')} strings}`,
    build: () => largeJson('{"query":"weather","hits":[', ']}', (i, body) => `"${i}: ${body}"`, (i) => String(i).length + 4),
  },
  {
    part: 'string',
    describe: () => '{query, text: one string}',
    build: () => {
      const pool = sentencePool();
      const lines = [];
      for (let i = 0, bytes = 0; bytes <= LARGE_TARGET_BYTES; i++) {
        lines.push(pool.bodies[i % pool.bodies.length]);
        bytes += pool.bytes[i % pool.bodies.length] + 2; // the `\n` between lines
      }
      return parseTimed(`{"query":"weather","text":"${lines.join('\\n')}"}`, 1);
    },
  },
  {
    part: 'members',
    describe: (n) => `one object of ${n.toLocaleString('en')} members`,
    build: () => largeJson('{', '}', (i, body) => `"m${String(i).padStart(7, '0')}":"${body}"`, () => 13),
  },
];

// ---- timing --------------------------------------------------------------------------------------

let blackhole = 0;

/** Runs `fn` for WARMUP_MS (at least once); returns how many calls fill a BATCH_MS batch. */
function warmUp(fn) {
  const t0 = performance.now();
  let calls = 0;
  do {
    blackhole += fn();
    calls++;
  } while (performance.now() - t0 < WARMUP_MS);
  const perCall = (performance.now() - t0) / calls;
  return { batch: Math.max(1, Math.round(BATCH_MS / perCall)), slow: perCall > SLOW_MS };
}

/**
 * Wall and CPU nanoseconds per call over one batch of `calls`. No forced GC before a batch: a `gc()`
 * before every batch made the allocating contestants look 2–3× slower than in steady state. The
 * scavenges a contestant's own garbage causes are counted in its batches.
 */
function timeBatch(fn, calls) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) blackhole += fn();
  const wall = Number(process.hrtime.bigint() - t0) / calls;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: ((cpu.user + cpu.system) * 1000) / calls };
}

/** Warm-up of each contestant, then rounds running every contestant once, in a rotated order. */
function contest(contestants) {
  const plans = contestants.map((c) => warmUp(c.run));
  const samples = contestants.map(() => []);
  const reps = plans.some((p) => p.slow) ? SLOW_REPS : REPS;
  for (let rep = 0; rep < reps; rep++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + rep) % contestants.length;
      if (samples[i].length === (plans[i].slow ? SLOW_REPS : REPS)) continue;
      samples[i].push(timeBatch(contestants[i].run, plans[i].batch));
    }
  }
  return contestants.map((c, i) => {
    const wall = samples[i].map((s) => s.wall);
    return { ...c, ns: median(wall), cpu: median(samples[i].map((s) => s.cpu)), spread: spread(wall), reps: wall.length };
  });
}

/** Best wall and best CPU time of PEER_CALLS single calls, each after a full GC (no warm-up: one call takes seconds). */
function timeFew(fn) {
  const times = [];
  for (let i = 0; i < PEER_CALLS; i++) {
    gc();
    times.push(timeBatch(fn, 1));
  }
  return { ns: Math.min(...times.map((t) => t.wall)), cpu: Math.min(...times.map((t) => t.cpu)) };
}



// ---- report ----------------------------------------------------------------------------------------

function time(ns) {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e4) return `${(ns / 1e3).toFixed(0)} µs`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${ns.toFixed(0)} ns`;
}
const ratio = (x) => (x >= 100 ? `${x.toFixed(0)}×` : `${x.toFixed(2)}×`);
const int = (n) => n.toLocaleString('en');
const pad = (text, width) => String(text).padEnd(width);
const lpad = (text, width) => String(text).padStart(width);
const verdict = (met) => (met ? 'MET' : 'MISSED');
/** `1.23× / 1.45× → MET` for a wall and a CPU ratio; MET only when both meet the target. */
const both = (x, meets) => `${ratio(x.wall)} / ${ratio(x.cpu)} → ${verdict(meets(x.wall) && meets(x.cpu))}${meets(x.wall) === meets(x.cpu) ? '' : ` (${meets(x.wall) ? 'cpu' : 'wall'} missed)`}`;

function check(condition, message) {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

// ---- (1) about 64 KiB, allowed ------------------------------------------------------------------

function smallContest() {
  const args = smallArguments();
  const allowing = RuntimePolicy.compile({ tools: { allow: ['search'] }, maxArgumentBytes: ALLOW_LIMIT });
  const bytes = Buffer.byteLength(JSON.stringify(args));
  const text = canonicalJson(args);
  const decision = allowing.checkTool('search', args);
  check(decision.reason === 'allowed' && decision.budget.measured_bytes === bytes, `64 KiB check gave ${decision.reason}, ${decision.budget.measured_bytes} B (expected allowed, ${bytes} B)`);
  check(text === canonicalize(args), 'canonicalJson and canonicalize disagree on the 64 KiB arguments');
  check(Buffer.byteLength(text) === bytes, 'canonical and JSON.stringify sizes differ');
  const tiny = { query: 'weather' };

  const rows = contest([
    { name: 'ours policy.checkTool', ours: true, run: () => allowing.checkTool('search', args).budget.measured_bytes },
    { name: 'floor Buffer.byteLength(JSON.stringify)', floor: true, run: () => Buffer.byteLength(JSON.stringify(args)) },
    { name: `canonicalize ${canonicalizeVersion} + Buffer.byteLength`, run: () => Buffer.byteLength(canonicalize(args)) },
    { name: '· ours measure() alone', run: () => measure(args, ALLOW_LIMIT).bytes },
    { name: '· ours canonicalJson + Buffer.byteLength', run: () => Buffer.byteLength(canonicalJson(args)) },
    { name: '· ours checkTool on {query} (fixed cost)', run: () => allowing.checkTool('search', tiny).budget.measured_bytes },
  ]);
  const nonAscii = [...text].filter((c) => c.codePointAt(0) > 0x7f).length;
  console.log(`\n(1) checkTool('search', args) on ${int(bytes)} B of arguments (${args.hits.length} hits, ${int(text.length)} UTF-16 units, ${int(nonAscii)} non-ASCII chars), maxArgumentBytes ${int(ALLOW_LIMIT)} → allowed`);
  const floor = rows.find((row) => row.floor);
  console.log(`  ${pad('contestant', 46)}${lpad('wall/op', 10)}${lpad('IQR', 6)}${lpad('vs floor', 10)}${lpad('cpu/op', 10)}${lpad('vs floor', 10)}`);
  for (const row of rows) {
    const iqr = `${(row.spread * 100).toFixed(0)}%`;
    console.log(`  ${pad(row.name, 46)}${lpad(time(row.ns), 10)}${lpad(iqr, 6)}${lpad(ratio(row.ns / floor.ns), 10)}${lpad(time(row.cpu), 10)}${lpad(ratio(row.cpu / floor.cpu), 10)}`);
  }
  return { args, allowing, bytes, ours: rows.find((row) => row.ours), floor, peer: rows[2] };
}

// ---- (2) about 100 MiB, denied ------------------------------------------------------------------

function largeContest(shape, small) {
  gc();
  const t0 = performance.now();
  let { value, count, parseNs } = shape.build();
  const built = performance.now() - t0;
  const denying = RuntimePolicy.compile({ tools: { allow: ['search'] }, maxArgumentBytes: DENY_LIMIT });
  const decision = denying.checkTool('search', value);
  check(decision.reason === 'argument_budget_exceeded' && decision.budget.measured_bytes > DENY_LIMIT, `100 MiB check gave ${decision.reason}`);

  const [ours, ours64] = contest([
    { name: 'ours checkTool, 100 MiB', run: () => denying.checkTool('search', value).budget.measured_bytes },
    { name: 'ours checkTool, 64 KiB (1)', run: () => small.allowing.checkTool('search', small.args).budget.measured_bytes },
  ]);
  let bytes = 0;
  const peer = timeFew(() => (bytes = Buffer.byteLength(canonicalize(value))));
  check(bytes > LARGE_TARGET_BYTES, `the ${shape.part} input is ${bytes} B, not over 100 MiB`);
  value = null;
  gc();
  return { shape, count, bytes, built, parseNs, ours, ours64, peer };
}

function printLarge(results) {
  console.log(`\n(2) checkTool('search', args) on over 100 MiB of arguments, maxArgumentBytes ${int(DENY_LIMIT)} → argument_budget_exceeded`);
  console.log(`    ours: median wall (and CPU) time after a warm-up, interleaved with the 64 KiB check of (1); canonicalize: best of ${PEER_CALLS} calls, + Buffer.byteLength;`);
  console.log('    JSON.parse: one parse of the input text, for scale (a server pays it before any check)');
  console.log(`  ${pad('shape', 40)}${lpad('bytes', 13)}${lpad('ours', 10)}${lpad('IQR', 6)}${lpad('cpu', 10)}${lpad('64 KiB', 10)}${lpad('100M/64K', 10)}${lpad('canonicalize', 14)}${lpad('peer/ours', 11)}${lpad('JSON.parse', 12)}`);
  for (const r of results) {
    const iqr = `${(r.ours.spread * 100).toFixed(0)}%`;
    console.log(
      `  ${pad(r.shape.describe(r.count), 40)}${lpad(int(r.bytes), 13)}${lpad(time(r.ours.ns), 10)}${lpad(iqr, 6)}${lpad(time(r.ours.cpu), 10)}${lpad(time(r.ours64.ns), 10)}` +
        `${lpad(ratio(r.ours.ns / r.ours64.ns), 10)}${lpad(time(r.peer.ns), 14)}${lpad(ratio(r.peer.ns / r.ours.ns), 11)}${lpad(time(r.parseNs), 12)}`,
    );
  }
}

// ---- main ----------------------------------------------------------------------------------------

function main() {
  const started = performance.now();
  const heap = getHeapStatistics().heap_size_limit / 2 ** 20;
  console.log(`policy benchmark: node ${process.version}, heap limit ${heap.toFixed(0)} MiB; fast ops: median of ${REPS} batches of ~${BATCH_MS} ms after a ${WARMUP_MS} ms warm-up, slow ops (> ${SLOW_MS} ms): median of ${SLOW_REPS}`);

  const small = smallContest();
  const large = [];
  for (const shape of LARGE_SHAPES) if (runs(shape.part)) large.push(largeContest(shape, small));
  if (large.length > 0) printLarge(large);

  console.log('\ntargets (wall / cpu)');
  const floorRatio = { wall: small.ours.ns / small.floor.ns, cpu: small.ours.cpu / small.floor.cpu };
  console.log(`  (1) 64 KiB checkTool ≤ 1.5× the JSON.stringify floor: ${both(floorRatio, (x) => x <= 1.5)}   (canonicalize: ${ratio(small.peer.ns / small.floor.ns)} / ${ratio(small.peer.cpu / small.floor.cpu)})`);
  for (const r of large) {
    const growth = { wall: r.ours.ns / r.ours64.ns, cpu: r.ours.cpu / r.ours64.cpu };
    const speedup = { wall: r.peer.ns / r.ours.ns, cpu: r.peer.cpu / r.ours.cpu };
    console.log(`  (2) ${pad(r.shape.part, 8)} 100 MiB check ≤ 2× the 64 KiB check: ${pad(both(growth, (x) => x <= 2), 28)}  ≥ 100× faster than canonicalize: ${both(speedup, (x) => x >= 100)}`);
  }
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  console.log(`\npeak RSS ${maxRssMiB.toFixed(0)} MiB, total ${((performance.now() - started) / 1000).toFixed(0)} s, of which building the 100 MiB inputs ${(large.reduce((sum, r) => sum + r.built, 0) / 1000).toFixed(0)} s`);
}

main();
