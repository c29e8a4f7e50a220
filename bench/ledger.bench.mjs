// Invocation ledger benchmark (spec 04): claim + checkpoint + finish per invocation through
// InvocationLedger, beside the same three statements sent raw through `pg` on the same pool (the
// floor), and claims/s with 8 concurrent workers. Run `npm run build` first, then
// `node bench/ledger.bench.mjs` (DATABASE_URL, or a throw-away embedded server); see README.md.
import { createRequire } from 'node:module';
import { randomBytes, randomUUID } from 'node:crypto';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchArgs } from './args.mjs';
import { onServer, openServer, withDatabase } from './database.mjs';

const require = createRequire(import.meta.url);
const { createAgentRuntimeDataSource } = require('../dist/src/database/data-source.factory.js');
const { InvocationLedger } = require('../dist/src/ledger/invocation-ledger.js');
const { ledgerStatements } = require('../dist/src/ledger/storage/ledger-sql.js');
const { qualifiedTable } = require('../dist/src/database/qualified-table.js');

const options = benchArgs(['invocations', 'reps', 'seconds', 'rounds']);
const arg = (name, fallback) => (options[name] === undefined ? fallback : Number(options[name]));
const INVOCATIONS = arg('invocations', 200); // per measured block
const REPS = arg('reps', 12); // blocks per contestant, interleaved, after one warm-up block each
const WORKERS = 8;
const CLAIM_SECONDS = arg('seconds', 4);
const CLAIM_ROUNDS = arg('rounds', 3); // interleaved rounds per contestant; the median round is reported
const LEASE_MS = 60_000;
const META = { workflowId: 'bench-agent', workflowVersion: '1', kind: 'agent_run' };
// a checkpoint as the Runner writes it after a tool step (about 300 bytes of canonical JSON)
const CHECKPOINT = {
  schema_version: 1,
  completed_steps: [
    { step_id: 'step-1', tool_name: 'search', response: { hits: [{ id: 'doc-17', score: 0.83, title: 'Lease fencing in practice' }], total: 1 } },
    { step_id: 'step-2', tool_name: 'fetch', response: { status: 200, bytes: 5120, summary: 'Postgres advisory locks are held per session.' } },
  ],
};
const OUTCOME = { answer: 'done', tokens: 812 };


// ---- contestants: each runs `n` invocations (claim, checkpoint, finish) on rows made beforehand ----

async function createRows(ledger, prefix, n) {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  for (let i = 0; i < n; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => ledger.create(id, META, null)));
  return ids;
}

async function viaLedger(ledger, ids) {
  for (const id of ids) {
    const { ownerToken } = await ledger.claim(id, { leaseMs: LEASE_MS });
    await ledger.checkpoint(id, ownerToken, CHECKPOINT, { leaseMs: LEASE_MS });
    await ledger.finish(id, ownerToken, 'completed', OUTCOME, undefined);
  }
}

/** The floor: the ledger's own three statements, parameters prepared as it would, straight on the pool. */
async function viaRawPg(pool, sql, instanceId, ids) {
  const checkpoint = JSON.stringify(CHECKPOINT);
  const outcome = JSON.stringify(OUTCOME);
  for (const id of ids) {
    const token = randomUUID();
    await pool.query(sql.claim, [id, token, instanceId, null, LEASE_MS]);
    await pool.query(sql.checkpoint, [id, token, null, LEASE_MS, checkpoint]);
    await pool.query(sql.finish, [id, token, null, 'completed', outcome, null]);
  }
}

async function claimsPerSecond(claim, ids, seconds) {
  let next = 0;
  let claims = 0;
  let failures = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (performance.now() < deadline && next < ids.length) {
        const id = ids[next++];
        try {
          await claim(id);
          claims++;
        } catch {
          failures++;
        }
      }
    }),
  );
  return { perSecond: claims / ((performance.now() - started) / 1000), claims, failures };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n, digits = 3) => n.toFixed(digits);

async function main() {
  const server = await openServer();
  const name = `agent_runtime_bench_${randomBytes(6).toString('hex')}`;
  await onServer(server.url, `CREATE DATABASE ${name}`);
  const url = withDatabase(server.url, name);
  const dataSource = createAgentRuntimeDataSource(url, { extra: { max: 10 } });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
    const ledger = new InvocationLedger(dataSource, { instanceId: 'bench-1' });
    await ledger.start();
    const pool = dataSource.driver.master;
    const [{ schema }] = (await pool.query('SELECT current_schema() AS schema')).rows;
    const sql = ledgerStatements(qualifiedTable(schema, 'agent_runtime_invocations'));
    const [{ synchronous_commit: syncCommit }] = (await pool.query('SHOW synchronous_commit')).rows;
    const [{ fsync }] = (await pool.query('SHOW fsync')).rows;
    const [{ server_version: version }] = (await pool.query('SHOW server_version')).rows;

    // (1) claim + checkpoint + finish per invocation: blocks in pairs, the order alternating (ABBA) so
    // that drift of a busy machine or disc falls on both contestants alike
    const ledgerMs = [];
    const rawMs = [];
    const ratios = [];
    const contestants = [
      ['ledger', (ids) => viaLedger(ledger, ids), ledgerMs],
      ['raw', (ids) => viaRawPg(pool, sql, ledger.instanceId, ids), rawMs],
    ];
    for (let rep = 0; rep <= REPS; rep++) {
      const pair = {};
      for (const [label, run, out] of rep % 2 ? [...contestants].reverse() : contestants) {
        const ids = await createRows(ledger, `${label}-${rep}`, INVOCATIONS);
        const started = performance.now();
        await run(ids);
        pair[label] = (performance.now() - started) / INVOCATIONS;
        if (rep > 0) out.push(pair[label]); // rep 0 warms up
      }
      if (rep > 0) ratios.push(pair.ledger / pair.raw);
    }

    // (2) claims/s with 8 concurrent workers, each claim on its own ready row; rounds interleaved
    const claimRows = Math.ceil(CLAIM_SECONDS * 6000);
    const ledgerRounds = [];
    const rawRounds = [];
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const ledgerIds = await createRows(ledger, `claims-ledger-${round}`, claimRows);
      ledgerRounds.push(await claimsPerSecond((id) => ledger.claim(id, { leaseMs: LEASE_MS }), ledgerIds, CLAIM_SECONDS));
      const rawIds = await createRows(ledger, `claims-raw-${round}`, claimRows);
      rawRounds.push(await claimsPerSecond((id) => pool.query(sql.claim, [id, randomUUID(), ledger.instanceId, null, LEASE_MS]), rawIds, CLAIM_SECONDS));
    }
    const middle = (rounds) => [...rounds].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(rounds.length / 2)];
    const ledgerClaims = middle(ledgerRounds);
    const rawClaims = middle(rawRounds);

    const ledgerMedian = median(ledgerMs);
    const rawMedian = median(rawMs);
    const machine = {
      date: new Date().toISOString(),
      nproc: availableParallelism(),
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      load: loadavg().map((l) => l.toFixed(2)).join(' '),
      postgres: `${version} (${server.source}; fsync=${fsync}, synchronous_commit=${syncCommit})`,
    };
    console.log(`\n## Invocation ledger benchmark\n`);
    for (const [key, value] of Object.entries(machine)) console.log(`- ${key}: ${value}`);
    console.log(`\n### (1) claim + checkpoint + finish, one invocation after another (${REPS} blocks of ${INVOCATIONS}, median block)\n`);
    console.log('| Contestant | ms per invocation | blocks (ms per invocation) |');
    console.log('|---|---|---|');
    console.log(`| InvocationLedger | ${fmt(ledgerMedian)} | ${ledgerMs.map((v) => fmt(v)).join(', ')} |`);
    console.log(`| same 3 statements raw on the pool (floor) | ${fmt(rawMedian)} | ${rawMs.map((v) => fmt(v)).join(', ')} |`);
    console.log(`\nRatio ledger / floor: **${fmt(median(ratios), 2)}×** median of the ${ratios.length} paired blocks (${fmt(ledgerMedian / rawMedian, 2)}× of the medians; target ≤ 1.3×)\n`);
    console.log(`### (2) claims per second, ${WORKERS} concurrent workers, one ready row per claim (median of ${CLAIM_ROUNDS} rounds of ${CLAIM_SECONDS} s)\n`);
    console.log('| Contestant | claims/s | claims | failures | all rounds (claims/s) |');
    console.log('|---|---|---|---|---|');
    console.log(`| InvocationLedger.claim | ${fmt(ledgerClaims.perSecond, 0)} | ${ledgerClaims.claims} | ${ledgerClaims.failures} | ${ledgerRounds.map((r) => fmt(r.perSecond, 0)).join(', ')} |`);
    console.log(`| claim statement raw on the pool (floor) | ${fmt(rawClaims.perSecond, 0)} | ${rawClaims.claims} | ${rawClaims.failures} | ${rawRounds.map((r) => fmt(r.perSecond, 0)).join(', ')} |`);
    await ledger.close();
  } finally {
    await dataSource.destroy();
    await onServer(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
