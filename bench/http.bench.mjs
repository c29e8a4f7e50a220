// HTTP benchmark of the Nest integration of admission (issue 7 §5): autocannon against a real Nest
// app (express platform, bench/http-app.mjs) in a child process. The four routes of the issue, plus
// one reference route with the shape of the last (a guard and two interceptors), all answer the same
// small JSON body. The server's CPU per request comes from /proc/<pid>/stat (utime + stime) of the
// child alone. Run with `npm run bench:http`; see bench/README.md ("HTTP integration").
//
//   node bench/http.bench.mjs [--rounds 7] [--requests 20000] [--connections 10]
//                             [--only <route>] [--profile <dir>]
//
// `--profile <dir>` runs the server under `node --cpu-prof --cpu-prof-dir=<dir>`; with `--only` the
// profile holds one route's requests. BENCH_DIST points at another build (default dist/).
import autocannon from 'autocannon';
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';
import { benchArgs } from './args.mjs';

const ROUTES = [
  { name: 'bare', path: '/bare', label: 'bare' },
  { name: 'noop', path: '/noop', label: 'no-op guard + no-op interceptor' },
  { name: 'noop2', path: '/noop2', label: 'no-op guard + two no-op interceptors (for reference)' },
  { name: 'admission', path: '/admission', label: "@Admission('bench')" },
  { name: 'admission-policy', path: '/admission-policy', label: "@Admission + @AgentEndpoint({agent:'bench'})" },
];
const BASELINE = 'noop';
const WARMUP_REQUESTS = 3_000;

const args = benchArgs(['rounds', 'requests', 'connections', 'only', 'profile']);
const ROUNDS = Number(args.rounds ?? 7);
const REQUESTS = Number(args.requests ?? 20_000);
const CONNECTIONS = Number(args.connections ?? 10);
const routes = args.only ? ROUTES.filter((route) => route.name === args.only) : ROUTES;
if (routes.length === 0) throw new Error(`unknown route ${args.only}; one of ${ROUTES.map((r) => r.name).join(', ')}`);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

const server = await startServer(args.profile);
const base = `http://127.0.0.1:${server.port}`;
console.log(
  `# HTTP integration benchmark: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
    `load ${loadavg().map((n) => n.toFixed(2)).join(' ')}, ${ROUNDS} rounds × ${REQUESTS} requests per route, ${CONNECTIONS} connections`,
);

for (const route of routes) await measure(route, WARMUP_REQUESTS);
const samples = new Map(routes.map((route) => [route.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  // the order rotates, so no route always runs right after the same neighbour or on a warmer heap
  const order = routes.map((_, i) => routes[(i + round) % routes.length]);
  for (const route of order) samples.get(route.name).push(await measure(route, REQUESTS));
  process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
}
const status = await server.ask('status');
await server.stop();

const rows = routes.map((route) => {
  const cpu = samples.get(route.name).map((run) => run.cpuUs);
  const rps = samples.get(route.name).map((run) => run.rps);
  return { route, cpu: median(cpu), cpuMin: Math.min(...cpu), cpuMax: Math.max(...cpu), rps: median(rps) };
});
const baseline = rows.find((row) => row.route.name === BASELINE);
console.log('\n| route | server CPU per request (median, min–max) | req/s (median) | CPU vs no-op | req/s vs no-op |');
console.log('|---|---|---|---|---|');
for (const row of rows) {
  const cpuRatio = baseline ? `${(row.cpu / baseline.cpu).toFixed(2)}×` : '–';
  const rpsRatio = baseline ? `${((row.rps / baseline.rps) * 100).toFixed(0)} %` : '–';
  console.log(`| ${row.route.label} | ${row.cpu.toFixed(0)} µs (${row.cpuMin.toFixed(0)}–${row.cpuMax.toFixed(0)}) | ${row.rps.toFixed(0)} | ${cpuRatio} | ${rpsRatio} |`);
}
console.log(`\nadmission status after the run: active ${status.active}, queue_length ${status.queue_length}`);
if (status.active !== 0) {
  console.error('FAIL: permits still held after every response was received');
  process.exitCode = 1;
}

/**
 * One autocannon run of `amount` requests, timed to its last response (autocannon itself only
 * stops on its next one-second tick), with the server's CPU time over exactly that span.
 */
async function measure(route, amount) {
  const before = serverCpuTicks(server.pid);
  const startedAt = performance.now();
  let answered = 0;
  let cpuAfter;
  let endedAt;
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon({ url: base + route.path, connections: CONNECTIONS, amount, timeout: 10 }, (error, done) => (error ? reject(error) : resolve(done)));
    instance.on('response', () => {
      if (++answered === amount) {
        endedAt = performance.now();
        cpuAfter = serverCpuTicks(server.pid);
      }
    });
  });
  const ok = result['2xx'];
  if (ok !== amount || result.errors !== 0 || result.timeouts !== 0 || endedAt === undefined) {
    throw new Error(`${route.name}: ${ok}/${amount} answered 2xx (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`);
  }
  const cpuUs = (((cpuAfter - before) / CLK_TCK) * 1e6) / amount;
  return { cpuUs, rps: amount / ((endedAt - startedAt) / 1000) };
}

/** utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat). */
function serverCpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12
  return Number(fields[11]) + Number(fields[12]);
}

async function startServer(profileDir) {
  const execArgv = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = fork(fileURLToPath(new URL('./http-app.mjs', import.meta.url)), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const next = () =>
    new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`bench server exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message);
      });
    });
  const { port } = await next();
  return {
    pid: child.pid,
    port,
    ask: async (what) => {
      const answer = next();
      child.send(what);
      return (await answer)[what];
    },
    stop: async () => {
      child.send('stop');
      await exited;
    },
  };
}

