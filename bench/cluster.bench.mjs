// Cluster-mode benchmark (spec 08 §6), contestants and floors side by side in one run:
//   (1) acquire+release per second over 2 instances: two ClusterAdmissionControllers (each on its own
//       ClusterInstance and DataSource), N loops per instance of `await acquire(agent); release(permit)`,
//       N = 1, 8, 32; beside them the process-local AdmissionController (2N loops) and a plain Postgres
//       floor of the same shape (2N loops: `BEGIN; pg_advisory_xact_lock; INSERT; COMMIT`, then the same
//       around a DELETE, on a scratch table, on the instances' own pools);
//   (2) release on A → grant seen on B (agent limit 1, B queued, A releases), alternating directions,
//       beside a plain NOTIFY floor of the same shape; and, poll-bound, the holder's instance dying
//       (its lock released) → the grant seen on B;
//   (3) SSE fan-out of one run to 1,000 subscribers over 2 Nest apps (RunsModule with the Postgres run
//       store, 500 real HTTP clients of `GET /runs/:id/events` on each app's socket, in a worker thread),
//       beside a floor of bare node:http servers that read each item once per instance after its NOTIFY
//       and write it to their 500 sockets.
// Run `npm run bench:cluster` (builds first); method and figures: bench/RESULTS.md, "Cluster mode".
//
//   node bench/cluster.bench.mjs [--rounds 5] [--ops 600] [--local-ops 50000] [--handoffs 250] [--kills 8]
//                                [--subscribers 1000] [--steps 25] [--gap-ms 20] [--fanout-runs 3]
//                                [--only admission|handoff|fanout]
//
// DATABASE_URL: that server (a database of its own is created and dropped); else a throw-away embedded
// server (fsync=off), as in the other database benchmarks.
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { median, pairedRatio, summary } from './stats.mjs';
import { benchArgs } from './args.mjs';
import { gitCommit } from './run-info.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

/** The process-wide monotonic clock in ms (the same in the worker thread). */
const now = () => Number(process.hrtime.bigint()) / 1e6;

// ==== the SSE clients (worker thread) ===================================================================

/**
 * Opens `count` SSE connections spread evenly over `targets`, records per item seq how many
 * subscribers received it and when the first and the last did (overall and per target), checks that
 * every stream is gap-free and in order up to its terminal item, and reports once all have ended.
 */
function clientWorker() {
  const { count } = workerData;
  const agent = new http.Agent({ keepAlive: false, maxSockets: count, maxTotalSockets: count });
  parentPort.on('message', ({ targets, path }) => {
    const seen = { count: [], first: [], last: [], lastBy: targets.map(() => []) };
    const totals = { ready: 0, ended: 0, failed: 0, outOfOrder: 0, withoutTerminal: 0, status: {} };
    const finish = () => {
      if (totals.ended + totals.failed === count) parentPort.postMessage({ type: 'done', seen, totals });
    };
    for (let i = 0; i < count; i++) {
      const target = i % targets.length;
      const request = http.get(`${targets[target]}${path}`, { agent, headers: { accept: 'text/event-stream' } }, (response) => {
        totals.status[response.statusCode] = (totals.status[response.statusCode] ?? 0) + 1;
        if (++totals.ready === count) parentPort.postMessage({ type: 'ready' });
        response.setEncoding('utf8');
        let buffer = '';
        let expected = 1;
        let terminal = false;
        response.on('data', (chunk) => {
          const at = now();
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!frame.startsWith('id: ')) continue; // a heartbeat comment
            const seq = Number(frame.slice(4, frame.indexOf('\n')));
            if (seq !== expected) totals.outOfOrder++;
            expected = seq + 1;
            if (frame.includes('\nevent: terminal\n')) terminal = true;
            seen.count[seq] = (seen.count[seq] ?? 0) + 1;
            seen.first[seq] = Math.min(seen.first[seq] ?? Infinity, at);
            seen.last[seq] = Math.max(seen.last[seq] ?? 0, at);
            seen.lastBy[target][seq] = Math.max(seen.lastBy[target][seq] ?? 0, at);
          }
        });
        response.on('end', () => {
          if (!terminal) totals.withoutTerminal++;
          totals.ended++;
          finish();
        });
      });
      request.on('error', () => {
        totals.failed++;
        finish();
      });
    }
  });
}

// ==== shared helpers (main thread) ======================================================================

const args = isMainThread ? benchArgs(['rounds', 'ops', 'local-ops', 'handoffs', 'kills', 'subscribers', 'steps', 'gap-ms', 'fanout-runs', 'only']) : {};
const ROUNDS = Number(args.rounds ?? 5);
const OPS = Number(args.ops ?? 600);
const LOCAL_OPS = Number(args['local-ops'] ?? 50_000);
const HANDOFFS = Number(args.handoffs ?? 250);
const KILLS = Number(args.kills ?? 8);
const SUBSCRIBERS = Number(args.subscribers ?? 1000);
const STEPS = Number(args.steps ?? 25);
const GAP_MS = Number(args['gap-ms'] ?? 20);
const FANOUT_RUNS = Number(args['fanout-runs'] ?? 3);
const PARTS = ['admission', 'handoff', 'fanout'];
if (args.only !== undefined && !PARTS.includes(args.only)) throw new Error(`--only: one of ${PARTS.join(', ')}`);
const runs = (part) => args.only === undefined || args.only === part;
const CONCURRENCIES = [1, 8, 32];
/** Limits of every controller: high enough never to queue in (1); agent `handoff` takes one at a time for (2). */
const CONFIG = Object.freeze({ globalLimit: 1000, defaultAgentLimit: 1000, agentLimits: { handoff: 1 }, overflow: 'queue', maxQueue: 1000, defaultQueueTimeoutMs: 30_000 });
const POOL_MAX = 10;
const SCRATCH = 'bench_cluster_scratch';
const FLOOR_LOCK = 'SELECT pg_advisory_xact_lock($1)';
const DECISION_LOCK = 'SELECT pg_advisory_xact_lock($1::bigint)';

const f = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const x = (n) => `${n.toFixed(2)}×`;
const int = (n) => Math.round(n).toLocaleString('en-US');
/** Nearest-rank quantile. */
const quantile = (values, p) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * values.length) - 1)];
const check = (condition, message) => {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
};
const cpuNow = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
/** A client or pool of the bench's own: a connection the server ends (the database dropped at the end) is not a crash. */
const quiet = (client) => (client.on('error', () => undefined), client);
const deferred = () => {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
};
/** Polls `condition` on every turn of the event loop, failing after `timeoutMs`. */
async function until(condition, what, timeoutMs = 10_000) {
  const deadline = now() + timeoutMs;
  while (!(await condition())) {
    if (now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Statements sent by every pg client of the process: in total and the lock statements of the decisions / the floor. */
const sent = { all: 0, decisions: 0, floorLocks: 0 };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(query, ...rest) {
  const text = typeof query === 'string' ? query : query?.text;
  sent.all++;
  if (text === DECISION_LOCK) sent.decisions++;
  else if (text === FLOOR_LOCK) sent.floorLocks++;
  return originalQuery.call(this, query, ...rest);
};

/** CPU ms of the server processes in `pids` (Linux /proc; the server must run on this machine), or NaN. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
/** Backends of the bench database, with their CPU so far; `cpuSince` sums what they (and any new ones) used since. */
async function serverCpu(monitor) {
  const pids = async () => (await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);
  const before = new Map((await pids()).map((pid) => [pid, processCpuMs(pid)]));
  return async () => {
    let total = 0;
    for (const pid of await pids()) total += processCpuMs(pid) - (before.get(pid) ?? 0);
    return total;
  };
}

// ==== (1) acquire+release per second ====================================================================

async function clusterNode(url, name, createDataSource, { ClusterInstance, ClusterAdmissionController, poolOf }) {
  const dataSource = await createDataSource(url, { extra: { max: POOL_MAX, application_name: name } }).initialize();
  const instance = new ClusterInstance({ dataSource, instanceId: name });
  await instance.start();
  const controller = new ClusterAdmissionController(CONFIG, { instance }, {});
  await controller.start();
  return {
    name,
    dataSource,
    instance,
    controller,
    pool: poolOf(dataSource),
    async stop() {
      await controller.stop();
      await instance.stop();
      await dataSource.destroy();
    },
  };
}

const permitsLeft = async (monitor) => (await monitor.query('SELECT count(*)::int AS n FROM agent_runtime_admission_permits')).rows[0].n;

/** Runs every contestant's block once per round (one warm-up round first, not recorded), order rotated. */
async function blockContest(contestants, rounds, monitor) {
  for (const c of contestants) await c.block();
  const samples = contestants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + round) % contestants.length;
      const server = await serverCpu(monitor);
      const statements = { ...sent };
      const cpu0 = cpuNow();
      const t0 = now();
      const { ops, acquiredMs } = await contestants[i].block();
      const ms = now() - t0;
      samples[i][round] = {
        wall: ms / ops,
        cpu: (cpuNow() - cpu0) / ops,
        server: ((await server()) * 1e3) / ops,
        statements: (sent.all - statements.all) / ops,
        decisions: (sent.decisions - statements.decisions) / ops,
        floorLocks: (sent.floorLocks - statements.floorLocks) / ops,
        tail: acquiredMs === undefined ? 0 : ms - acquiredMs,
      };
    }
  }
  return contestants.map((c, i) => {
    const s = samples[i];
    const med = (field) => median(s.map((sample) => sample[field]));
    return { ...c, samples: s, ...summary(s), server: med('server'), statements: med('statements'), decisions: med('decisions'), floorLocks: med('floorLocks'), tail: med('tail') };
  });
}

/** `loops` async loops of `each` calls of `op(loop)`; ms from the start to the last op's end. */
async function loops(count, each, op) {
  const t0 = now();
  await Promise.all(Array.from({ length: count }, async (_, loop) => {
    for (let i = 0; i < each; i++) await op(loop);
  }));
  return now() - t0;
}

/** Samples pg_stat_activity on its own connection while `work` runs: mean busy sessions and advisory-lock waiters. */
async function lockWaits(url, work) {
  const sampler = quiet(new pg.Client({ connectionString: url }));
  await sampler.connect();
  const totals = { samples: 0, busy: 0, advisory: 0 };
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const { rows } = await sampler.query(`SELECT count(*)::int AS busy, count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory')::int AS advisory FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`);
      totals.samples++;
      totals.busy += rows[0].busy;
      totals.advisory += rows[0].advisory;
      await sleep(1);
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await sampling;
    await sampler.end();
  }
  return { samples: totals.samples, busy: totals.busy / Math.max(1, totals.samples), advisory: totals.advisory / Math.max(1, totals.samples) };
}

async function partAdmission(nodes, monitor, url, { AdmissionController }) {
  const [a] = nodes;
  await a.pool.query(`CREATE TABLE ${SCRATCH} (permit_id text PRIMARY KEY, agent_id text NOT NULL, instance_id text NOT NULL, granted_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  const floorKey = 0x5eed;
  let floorIds = 0;
  const floorTransaction = async (pool, sql, values) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(FLOOR_LOCK, [floorKey]);
      await client.query(sql, values);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  const floorOp = async (node) => {
    const id = `floor-${floorIds++}`;
    await floorTransaction(node.pool, `INSERT INTO ${SCRATCH} (permit_id, agent_id, instance_id) VALUES ($1, 'bench', $2)`, [id, node.name]);
    await floorTransaction(node.pool, `DELETE FROM ${SCRATCH} WHERE permit_id = $1`, [id]);
  };
  const local = new AdmissionController(CONFIG);
  const clusterOp = async (controller) => {
    const permit = await controller.acquire('bench');
    check(controller.release(permit), 'a release returned false');
  };
  const rows = [];
  const waits = {};
  for (const c of CONCURRENCIES) {
    const each = Math.max(1, Math.ceil(OPS / (2 * c)));
    const localEach = Math.max(1, Math.ceil(LOCAL_OPS / (2 * c)));
    const contestants = [
      { key: `cluster${c}`, c, label: `ClusterAdmissionController × 2 instances, ${c} loop${c > 1 ? 's' : ''} each`, block: async () => {
        const t0 = now();
        const acquired = await loops(2 * c, each, (loop) => clusterOp(nodes[loop % 2].controller));
        const acquiredAt = now();
        await until(async () => (await permitsLeft(monitor)) === 0, 'the releases to land');
        check(acquired > 0, 'no time passed');
        return { ops: 2 * c * each, acquiredMs: acquiredAt - t0 };
      } },
      { key: `local${c}`, c, label: `AdmissionController (process-local), ${2 * c} loops`, block: async () => {
        await loops(2 * c, localEach, () => clusterOp(local));
        return { ops: 2 * c * localEach };
      } },
      { key: `floor${c}`, c, label: `plain Postgres floor: lock + INSERT, lock + DELETE, ${c} loop${c > 1 ? 's' : ''} per pool`, block: async () => {
        await loops(2 * c, each, (loop) => floorOp(nodes[loop % 2]));
        return { ops: 2 * c * each };
      } },
    ];
    const [cluster, localRow, floor] = await blockContest(contestants, ROUNDS, monitor);
    rows.push({ c, cluster, local: localRow, floor });
    waits[c] = await lockWaits(url, () => loops(2 * c, each, (loop) => clusterOp(nodes[loop % 2].controller)));
    await until(async () => (await permitsLeft(monitor)) === 0, 'the releases to land');
    waits[`floor${c}`] = await lockWaits(url, () => loops(2 * c, each, (loop) => floorOp(nodes[loop % 2])));
  }
  check(local.status().active === 0, 'the local controller still holds a permit');

  console.log(`\n### (1) Acquire+release per second over 2 instances\n`);
  console.log(`Two ClusterAdmissionControllers (each: its own DataSource, pool max ${POOL_MAX}, ClusterInstance, default reapIntervalMs 1000), limits global 1000 / agent 1000 (never queues); each loop does \`const p = await acquire('bench'); release(p)\`. A cluster block is ${int(OPS)} ops spread over the loops and ends once the permits table is empty (every release's delete landed); the local controller runs ${int(LOCAL_OPS)} ops per block; the floor runs the cluster's op count, each op two transactions of 4 round trips on the instances' pools. ${ROUNDS} rounds after one warm-up block, order rotated; median block. cpu: this Node process; server: the bench database's backends (/proc). Statements and decision locks per op are every pg client of the process (the instances' 1 s polls included).\n`);
  console.log('| Contestant | ops/s | µs/op | node cpu µs/op | server cpu µs/op | statements/op | decisions/op | tail after last acquire ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { cluster, local: l, floor } of rows) {
    for (const r of [cluster, l, floor]) {
      const locks = r === floor ? f(r.floorLocks, 2) : r === cluster ? f(r.decisions, 2) : '0';
      console.log(`| ${r.label} | ${int(1000 / r.wall)} | ${f(r.wall * 1e3, 1)} | ${f(r.cpu, 1)} | ${f(r.server, 1)} | ${f(r.statements, 2)} | ${locks} | ${r === cluster ? f(r.tail, 1) : ''} |`);
    }
  }
  console.log('');
  for (const { c, cluster, local: l, floor } of rows) {
    const w = waits[c];
    const fw = waits[`floor${c}`];
    console.log(`- ${c} loop${c > 1 ? 's' : ''} per instance: cluster **${int(1000 / cluster.wall)} ops/s**; cluster / plain-Postgres floor **${x(pairedRatio(cluster, floor, 'wall'))}** time per op (${x(pairedRatio(cluster, floor, 'cpu'))} node cpu); cluster / local controller ${x(pairedRatio(cluster, l, 'wall'))}; untimed block with pg_stat_activity sampled (${w.samples} samples): ${f(w.busy)} sessions busy, ${f(w.advisory)} waiting for the advisory lock (floor: ${f(fw.busy)} busy, ${f(fw.advisory)} waiting)`);
  }
  const best = Math.max(...rows.map((r) => 1000 / r.cluster.wall));
  console.log(`- target ≥ 2,000 acquire+release/s over 2 instances: best ${int(best)} ops/s → ${best >= 2000 ? 'MET' : 'MISSED'}`);
  return rows;
}

// ==== (2) release on A → grant seen on B ================================================================

async function partHandoff(nodes, monitor, url, { ClusterInstance, ClusterAdmissionController }) {
  const [a, b] = nodes;
  // a listener of our own on the admission channel: when the NOTIFY of the grant arrives
  const listener = quiet(new pg.Client({ connectionString: url }));
  await listener.connect();
  let notifiedAt = 0;
  listener.on('notification', (message) => {
    if (message.channel === 'agent_runtime_admission') notifiedAt = now();
    else floorArrived?.(message.payload);
  });
  await listener.query('LISTEN agent_runtime_admission');
  await listener.query('LISTEN bench_cluster_floor');
  let floorArrived;
  await a.pool.query(`CREATE TABLE IF NOT EXISTS ${SCRATCH} (permit_id text PRIMARY KEY, agent_id text NOT NULL, instance_id text NOT NULL, granted_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  await a.pool.query(`DELETE FROM ${SCRATCH}`);
  await a.pool.query(`INSERT INTO ${SCRATCH} (permit_id, agent_id, instance_id) VALUES ('held-0', 'handoff', 'a')`);

  const cluster = { total: [], notify: [], grant: [] };
  const floor = { total: [], notify: [] };
  const sample = async (holder, waiter) => {
    await until(async () => (await permitsLeft(monitor)) === 0, 'an empty permits table');
    const permit = await holder.controller.acquire('handoff');
    const waiting = waiter.controller.acquire('handoff');
    await until(() => waiter.controller.status().instance.queued === 1, 'the waiter to be queued');
    notifiedAt = 0;
    const t0 = now();
    holder.controller.release(permit);
    const granted = await waiting;
    const t1 = now();
    waiter.controller.release(granted);
    cluster.total.push(t1 - t0);
    // the bench's own listener may hear of the grant after B (its callback runs on this same event loop)
    await until(() => notifiedAt > 0, 'the grant notification', 1000);
    cluster.notify.push(notifiedAt - t0);
    cluster.grant.push(t1 - notifiedAt);
  };
  // the floor: the same shape in plain statements: lock, delete the held row, insert the waiter's, notify, commit on A's pool; on the notification, one SELECT on B's pool
  let floorSeq = 0;
  const floorSample = async (holder, waiter) => {
    const from = `held-${floorSeq}`;
    const to = `held-${++floorSeq}`;
    const arrived = deferred();
    floorArrived = (payload) => payload === to && arrived.resolve(now());
    const t0 = now();
    const client = await holder.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(FLOOR_LOCK, [0x5eed]);
      await client.query(`DELETE FROM ${SCRATCH} WHERE permit_id = $1`, [from]);
      await client.query(`INSERT INTO ${SCRATCH} (permit_id, agent_id, instance_id) VALUES ($1, 'handoff', $2)`, [to, waiter.name]);
      await client.query(`SELECT pg_notify('bench_cluster_floor', $1)`, [to]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const at = await arrived.promise;
    const { rows } = await waiter.pool.query(`SELECT permit_id FROM ${SCRATCH} WHERE permit_id = $1`, [to]);
    check(rows.length === 1, 'the floor row is missing');
    const t1 = now();
    floor.total.push(t1 - t0);
    floor.notify.push(at - t0);
  };
  for (let i = 0; i < 10; i++) await sample(i % 2 ? b : a, i % 2 ? a : b); // warm-up
  cluster.total.length = cluster.notify.length = cluster.grant.length = 0;
  for (let i = 0; i < 10; i++) await floorSample(i % 2 ? b : a, i % 2 ? a : b);
  floor.total.length = floor.notify.length = 0;
  for (let i = 0; i < HANDOFFS; i++) {
    const [holder, waiter] = i % 2 ? [b, a] : [a, b];
    await sample(holder, waiter);
    await floorSample(holder, waiter);
  }

  // poll-bound: the holder is an instance whose lock goes (it dies); B's (or A's) next periodic decision reaps its permit and grants
  const kills = [];
  for (let k = 0; k < KILLS; k++) {
    await until(async () => (await permitsLeft(monitor)) === 0, 'an empty permits table');
    const instance = new ClusterInstance({ dataSource: a.dataSource, instanceId: `victim-${k}` });
    await instance.start();
    const controller = new ClusterAdmissionController(CONFIG, { instance }, {});
    await controller.start();
    const permit = await controller.acquire('handoff');
    check(permit.agentId === 'handoff', 'the victim holds no permit');
    const waiting = b.controller.acquire('handoff');
    await until(() => b.controller.status().instance.queued === 1, 'B to be queued');
    // at a random phase of the periodic decisions (they run every reapIntervalMs after the previous one ended)
    await sleep(Math.random() * 1000);
    const t0 = now();
    await instance.stop(); // the lock is released: to every other instance the holder is dead; its permit row stays
    const granted = await waiting;
    kills.push(now() - t0);
    b.controller.release(granted);
    await controller.stop(); // its permit was reaped: the controller revokes it (owner_down) and leaves
  }
  await listener.end();

  const line = (label, values) => `| ${label} | ${values.length} | ${f(median(values))} | ${f(quantile(values, 0.9))} | ${f(quantile(values, 0.99))} | ${f(Math.max(...values))} |`;
  console.log(`\n### (2) Release on A → grant seen on B\n`);
  console.log(`Agent \`handoff\` has limit 1. Per sample: the holder acquires, the other instance's \`acquire\` is queued (its submit decision committed), then the clock runs from \`release()\` on the holder to the waiter's \`acquire\` resolving; holder and waiter alternate between A and B; ${HANDOFFS} samples, each followed by a floor sample (one transaction on the holder's pool: \`BEGIN; pg_advisory_xact_lock; DELETE; INSERT; pg_notify; COMMIT\`, then on the notification's arrival at a LISTEN connection one \`SELECT\` on the waiter's pool). "NOTIFY seen" is when a LISTEN connection of the bench received the grant's notification. ms.\n`);
  console.log('| Path | samples | p50 | p90 | p99 | max |');
  console.log('|---|---|---|---|---|---|');
  console.log(line('release on A → grant resolved on B (NOTIFY path)', cluster.total));
  console.log(line('… of it: release → NOTIFY seen (the release decision)', cluster.notify));
  console.log(line('… of it: NOTIFY seen → grant resolved (B reads its grant)', cluster.grant));
  console.log(line('floor: transaction + NOTIFY + SELECT on the other pool', floor.total));
  console.log(line('… of it: floor transaction → NOTIFY seen', floor.notify));
  if (kills.length > 0) console.log(line(`holder's instance lock released → grant resolved on B (poll-bound, reapIntervalMs 1000 on A and B)`, kills));
  console.log('');
  const p99 = quantile(cluster.total, 0.99);
  console.log(`- release→grant / floor: p50 ${x(median(cluster.total) / median(floor.total))}, p99 ${x(p99 / quantile(floor.total, 0.99))}`);
  console.log(`- target p99 ≤ 20 ms: ${f(p99)} ms → ${p99 <= 20 ? 'MET' : 'MISSED'}`);
  return { cluster, floor, kills };
}

// ==== (3) SSE fan-out ===================================================================================

const AGENT = 'fanout';

/** The agent's model hands each call to the current run's ScriptedModel (a script is consumed). */
function fanoutAgent(forwarder) {
  const pause = { name: 'pause', parameters: { type: 'object', properties: {}, additionalProperties: false }, execute: async () => (await sleep(GAP_MS), { ok: true }) };
  return { name: AGENT, model: { name: 'scripted', generate: (request, signal) => forwarder.current.generate(request, signal) }, tools: [pause] };
}

/** The first model call waits for `gate`; then STEPS turns of one `pause` call, each model call and tool call taking GAP_MS. */
function script(gate) {
  const turn = (i) => ({ toolCalls: [{ id: `c${i}`, name: 'pause', args: {} }] });
  return [
    async () => (await gate, turn(0)),
    ...Array.from({ length: STEPS - 1 }, (_, i) => async () => (await sleep(GAP_MS), turn(i + 1))),
    async () => (await sleep(GAP_MS), { text: 'done' }),
  ];
}

async function startFanoutApp(url, instanceId, runner, lib) {
  const { Module, NestFactory, TypeOrmModule, ClusterModule, RunsModule, PostgresRunStoreProvider, agentRuntimeDataSourceOptions } = lib;
  class FanoutModule {}
  Module({
    imports: [
      TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(url, { extra: { max: POOL_MAX, application_name: instanceId } })),
      ClusterModule.forRoot({ instanceId }),
      RunsModule.forRoot({ runners: [runner], store: PostgresRunStoreProvider }),
    ],
  })(FanoutModule);
  const app = await NestFactory.create(FanoutModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: `http://127.0.0.1:${app.getHttpServer().address().port}` };
}

/** The floor's SSE server: one LISTEN connection; per notification one SELECT of the item, written to every subscriber of its stream. */
async function startFloorServer(url) {
  const pool = quiet(new pg.Pool({ connectionString: url, max: POOL_MAX }));
  const listener = quiet(new pg.Client({ connectionString: url }));
  await listener.connect();
  const streams = new Map();
  listener.on('notification', async ({ payload }) => {
    const colon = payload.lastIndexOf(':');
    const [stream, seq] = [payload.slice(0, colon), Number(payload.slice(colon + 1))];
    const { rows } = await pool.query('SELECT type, payload::text AS payload FROM bench_cluster_items WHERE stream_id = $1 AND seq = $2', [stream, seq]);
    const frame = `id: ${seq}\nevent: ${rows[0].type}\ndata: ${rows[0].payload}\n\n`;
    for (const response of streams.get(stream) ?? []) {
      response.write(frame);
      if (rows[0].type === 'terminal') response.end();
    }
  });
  await listener.query('LISTEN bench_cluster_items');
  const server = http.createServer((request, response) => {
    const stream = request.url.split('/')[2];
    response.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive' });
    response.flushHeaders();
    if (!streams.has(stream)) streams.set(stream, new Set());
    streams.get(stream).add(response);
    response.on('close', () => streams.get(stream)?.delete(response));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      await listener.end();
      await pool.end();
    },
  };
}

async function partFanout(url, lib) {
  const { Runner, InMemorySessionService, ScriptedModel, RunRegistry, RunStore } = lib;
  const forwarder = { current: null };
  const runnerOf = () => new Runner({ appName: 'bench-cluster', agent: fanoutAgent(forwarder), sessionService: new InMemorySessionService() });
  const apps = [await startFanoutApp(url, 'fanout-a', runnerOf(), lib), await startFanoutApp(url, 'fanout-b', runnerOf(), lib)];
  const registry = apps[0].app.get(RunRegistry);
  const pools = apps.map(({ app }) => app.get(lib.ClusterInstance).pool);
  const store = apps[0].app.get(RunStore);
  // when each item of A's run was appended: the call, and its resolution (committed, notified, local watchers woken)
  let marks = new Map();
  const append = store.append.bind(store);
  store.append = async (runId, item, options) => {
    const start = now();
    const outcome = await append(runId, item, options);
    if (outcome.written) marks.set(outcome.item.seq, { start, committed: now(), type: outcome.item.type });
    return outcome;
  };
  const floorPool = quiet(new pg.Pool({ connectionString: url, max: 2 }));
  await floorPool.query('CREATE TABLE bench_cluster_items (stream_id text NOT NULL, seq integer NOT NULL, type text NOT NULL, payload jsonb NOT NULL, PRIMARY KEY (stream_id, seq))');
  const floors = [await startFloorServer(url), await startFloorServer(url)];
  const worker = new Worker(new URL(import.meta.url), { workerData: { count: SUBSCRIBERS } });
  const fromWorker = (type) => new Promise((resolve, reject) => {
    const onMessage = (message) => {
      if (message.type !== type) return;
      worker.off('message', onMessage);
      worker.off('error', reject);
      resolve(message);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });

  /** Subscribes every client, opens the gate, waits until every stream ended; the items' latencies in ms. */
  const measure = async (targets, path, publish) => {
    marks = new Map();
    const ready = fromWorker('ready');
    const done = fromWorker('done');
    worker.postMessage({ targets, path });
    await ready;
    const statements = sent.all;
    const opened = now();
    const cpu0 = cpuNow();
    // how many queries wait for a connection of each app's pool, every 5 ms
    const waiting = { samples: 0, a: 0, b: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        waiting.samples++;
        waiting.a += pools[0].waitingCount;
        waiting.b += pools[1].waitingCount;
        await sleep(5);
      }
    })();
    await publish();
    const { seen, totals } = await done;
    sampling = false;
    await sampler;
    const elapsed = now() - opened;
    const cpu = (cpuNow() - cpu0) / 1e3;
    const live = [...marks].filter(([, m]) => m.start >= opened);
    const lat = { last: [], first: [], fromCall: [], append: [], lastA: [], lastB: [], missing: 0 };
    for (const [seq, m] of live) {
      if (seen.count[seq] !== SUBSCRIBERS) lat.missing++;
      lat.last.push(seen.last[seq] - m.committed);
      lat.first.push(seen.first[seq] - m.committed);
      lat.fromCall.push(seen.last[seq] - m.start);
      lat.append.push(m.committed - m.start);
      lat.lastA.push(seen.lastBy[0][seq] - m.committed);
      lat.lastB.push(seen.lastBy[1][seq] - m.committed);
    }
    const items = Math.max(...seen.count.map((_, seq) => seq).filter(Number.isFinite));
    check(totals.status[200] === SUBSCRIBERS, `answers ${JSON.stringify(totals.status)}`);
    check(totals.outOfOrder === 0 && totals.withoutTerminal === 0 && totals.failed === 0, `streams: ${JSON.stringify(totals)}`);
    check(lat.missing === 0, `${lat.missing} items did not reach every subscriber`);
    return { ...lat, items, live: live.length, poolWaiting: [waiting.a / waiting.samples, waiting.b / waiting.samples], elapsed, cpu, statements: (sent.all - statements) / live.length, itemSpan: live.length > 1 ? (live.at(-1)[1].committed - live[0][1].committed) / (live.length - 1) : NaN };
  };

  const realRun = async () => {
    const gate = deferred();
    forwarder.current = new ScriptedModel(script(gate.promise));
    const { run_id: runId } = await registry.start({ agent: AGENT, userId: 'bench-user', message: 'go' });
    const result = await measure(apps.map((a) => a.url), `/runs/${runId}/events`, async () => gate.resolve());
    const record = await registry.get(runId);
    check(record.status === 'completed', `the run ended ${record.status}`);
    const { rows } = await floorPool.query('SELECT type, payload::text AS payload FROM agent_runtime_run_items WHERE run_id = $1 ORDER BY seq', [runId]);
    return { ...result, stored: rows };
  };
  let template = [];
  let floorStreams = 0;
  const floorRun = async () => {
    const stream = `floor-${floorStreams++}`;
    const publish = async () => {
      for (let i = 0; i < template.length; i++) {
        if (i > 0) await sleep(GAP_MS);
        const seq = i + 1;
        const start = now();
        await floorPool.query(`WITH item AS (INSERT INTO bench_cluster_items (stream_id, seq, type, payload) VALUES ($1, $2, $3, $4::jsonb) RETURNING seq) SELECT pg_notify('bench_cluster_items', $1 || ':' || $2) FROM item`, [stream, seq, template[i].type, template[i].payload]);
        marks.set(seq, { start, committed: now(), type: template[i].type });
      }
    };
    return measure(floors.map((s) => s.url), `/floor/${stream}/events`, publish);
  };

  const real = [];
  const floor = [];
  try {
    const warm = await realRun(); // warm-up, not recorded; its stored items are the floor's items
    template = warm.stored;
    for (let round = 0; round < FANOUT_RUNS; round++) {
      if (round % 2 === 0) {
        real.push(await realRun());
        floor.push(await floorRun());
      } else {
        floor.push(await floorRun());
        real.push(await realRun());
      }
    }
  } finally {
    await worker.terminate();
    for (const s of floors) await s.stop();
    await floorPool.end();
    for (const { app } of apps) await app.close();
  }

  const all = (results, field) => results.flatMap((r) => r[field]);
  const line = (label, values) => `| ${label} | ${values.length} | ${f(median(values))} | ${f(quantile(values, 0.9))} | ${f(quantile(values, 0.99))} | ${f(Math.max(...values))} |`;
  const sizes = template.map((item) => item.payload.length);
  console.log(`\n### (3) SSE fan-out of one run to ${int(SUBSCRIBERS)} subscribers over 2 instances\n`);
  console.log(`Two Nest apps in this process (express; each: \`TypeOrmModule.forRoot\` pool max ${POOL_MAX}, \`ClusterModule.forRoot\`, \`RunsModule.forRoot({runners, store: PostgresRunStoreProvider})\`). The run is started on A (\`RunRegistry.start\`); its first model call waits until all ${int(SUBSCRIBERS)} clients (a worker thread, node:http, one socket each, ${int(SUBSCRIBERS / 2)} on each app) have their 200 answer of \`GET /runs/:id/events\`; then ${STEPS} turns of one tool call, the model and the tool each taking ${GAP_MS} ms: ${template.length} items per run (payload ${int(Math.min(...sizes))}–${int(Math.max(...sizes))} bytes, median ${int(median(sizes))}), about one every ${GAP_MS} ms. Per item, latency = the last (or first) subscriber's receipt minus the moment A's \`PostgresRunStore.append\` resolved (committed and notified); "from the append call" starts before its transaction. Items appended before the gate opened (replayed on connect) are left out. Floor: two bare node:http servers, each with one LISTEN connection; the bench inserts the same items (the warm-up run's stored payloads) with a NOTIFY in one statement every ${GAP_MS} ms, and on each notification each server reads the item once and writes it to its ${int(SUBSCRIBERS / 2)} sockets. One warm-up run, then ${FANOUT_RUNS} runs of each, alternating. ms, over every item of every run.\n`);
  console.log('| Path | items | p50 | p90 | p99 | max |');
  console.log('|---|---|---|---|---|---|');
  console.log(line('run store: append resolved → last subscriber', all(real, 'last')));
  console.log(line('… last subscriber on A (the appending instance)', all(real, 'lastA')));
  console.log(line('… last subscriber on B', all(real, 'lastB')));
  console.log(line('… first subscriber', all(real, 'first')));
  console.log(line('… from the append call → last subscriber', all(real, 'fromCall')));
  console.log(line('… the append itself: call → resolved', all(real, 'append')));
  console.log(line('floor: INSERT + NOTIFY resolved → last subscriber', all(floor, 'last')));
  console.log(line('… floor: first subscriber', all(floor, 'first')));
  console.log(line('… floor: the INSERT + NOTIFY itself', all(floor, 'append')));
  console.log('');
  for (const [label, results] of [['run store', real], ['floor', floor]]) {
    console.log(`- ${label}: runs of ${results.map((r) => r.live).join(', ')} timed items; ${results.map((r) => f(r.elapsed / 1000, 2)).join(', ')} s from the gate to the last stream's end; an item every ${results.map((r) => f(r.itemSpan, 1)).join(', ')} ms; ${results.map((r) => f(r.statements, 0)).join(', ')} statements per item (every pg client of the process); Node cpu ${results.map((r) => f(r.cpu / r.live, 1)).join(', ')} ms per item (main thread + client worker); per-run p99 to the last subscriber ${results.map((r) => f(quantile(r.last, 0.99), 1)).join(', ')} ms${results === real ? `; queries waiting for a pool connection, mean of 5 ms samples, A / B: ${results.map((r) => `${f(r.poolWaiting[0], 0)} / ${f(r.poolWaiting[1], 0)}`).join(', ')}` : ''}`);
  }
  const p99 = quantile(all(real, 'last'), 0.99);
  console.log(`- target p99 event → last subscriber ≤ 50 ms: ${f(p99, 1)} ms → ${p99 <= 50 ? 'MET' : 'MISSED'}`);
  return { real, floor };
}

// ==== main ==============================================================================================

async function main({ onServer, openServer, withDatabase }) {
  const started = now();
  const fdLimit = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim();
  console.log(`## Cluster-mode benchmark\n`);
  console.log(`- date: ${new Date().toISOString()}; node ${process.version}; ${availableParallelism()} × ${cpus()[0]?.model.trim()}; load at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}; commit ${gitCommit()}; open-file limit ${fdLimit}`);
  console.log(`- options: rounds ${ROUNDS}, ops ${OPS}, local-ops ${LOCAL_OPS}, handoffs ${HANDOFFS}, kills ${KILLS}, subscribers ${SUBSCRIBERS}, steps ${STEPS}, gap-ms ${GAP_MS}, fanout-runs ${FANOUT_RUNS}${args.only ? `, only ${args.only}` : ''}`);
  const neededFds = 2 * SUBSCRIBERS + 200;
  if (runs('fanout') && Number(fdLimit) < neededFds) throw new Error(`the open-file limit ${fdLimit} is below the ${neededFds} descriptors ${int(SUBSCRIBERS)} subscribers need (client and server side of each socket); raise it (ulimit -n) or pass --subscribers`);

  const { createAgentRuntimeDataSource, runAgentRuntimeMigrations, agentRuntimeDataSourceOptions } = require('../dist/src/database/data-source.factory.js');
  const lib = {
    ClusterInstance: require('../dist/src/cluster/cluster-instance.js').ClusterInstance,
    ClusterAdmissionController: require('../dist/src/admission/cluster/cluster-admission-controller.js').ClusterAdmissionController,
    AdmissionController: require('../dist/src/admission/admission-controller.js').AdmissionController,
    poolOf: require('../dist/src/database/postgres-pool.js').poolOf,
  };
  const server = await openServer();
  const name = `agent_runtime_bench_${randomBytes(6).toString('hex')}`;
  await onServer(server.url, `CREATE DATABASE ${name}`);
  const url = withDatabase(server.url, name);
  const monitor = quiet(new pg.Client({ connectionString: url }));
  let nodes = [];
  try {
    await runAgentRuntimeMigrations(url);
    await monitor.connect();
    const [{ settings }] = (await monitor.query(`SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) AS settings FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'server_version', 'max_connections')`)).rows;
    console.log(`- Postgres: ${server.source}; ${settings}`);
    if (runs('admission') || runs('handoff')) {
      nodes = [await clusterNode(url, 'node-a', createAgentRuntimeDataSource, lib), await clusterNode(url, 'node-b', createAgentRuntimeDataSource, lib)];
      if (runs('admission')) await partAdmission(nodes, monitor, url, lib);
      if (runs('handoff')) await partHandoff(nodes, monitor, url, lib);
      for (const node of nodes.splice(0)) await node.stop();
    }
    if (runs('fanout')) {
      require('reflect-metadata');
      await partFanout(url, {
        ...lib,
        agentRuntimeDataSourceOptions,
        Module: require('@nestjs/common').Module,
        NestFactory: require('@nestjs/core').NestFactory,
        TypeOrmModule: require('@nestjs/typeorm').TypeOrmModule,
        ClusterModule: require('../dist/src/cluster/cluster.module.js').ClusterModule,
        RunsModule: require('../dist/src/runner/runs/runs.module.js').RunsModule,
        RunStore: require('../dist/src/runner/runs/stores/run-store.js').RunStore,
        PostgresRunStoreProvider: require('../dist/src/runner/runs/stores/postgres/postgres-run-store.provider.js').PostgresRunStoreProvider,
        RunRegistry: require('../dist/src/runner/runs/run-registry.js').RunRegistry,
        Runner: require('../dist/src/runner/runner.js').Runner,
        InMemorySessionService: require('../dist/src/services/sessions/in-memory-session-service.js').InMemorySessionService,
        ScriptedModel: require('../dist/src/runner/models/scripted-model.js').ScriptedModel,
      });
    }
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    for (const node of nodes) await node.stop().catch(() => undefined);
    await monitor.end().catch(() => undefined);
    await onServer(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.stop();
  }
  console.log(`\ntotal ${((now() - started) / 1000).toFixed(0)} s, load at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
}

if (isMainThread) {
  const { onServer, openServer, withDatabase } = await import('./database.mjs');
  await main({ onServer, openServer, withDatabase }).catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
} else {
  clientWorker();
}
