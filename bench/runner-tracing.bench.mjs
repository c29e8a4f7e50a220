// What the Runner's default tracing costs (issue 21): a Runner given no `tracing` option starts its spans on
// OpenTelemetry's global tracer when `@opentelemetry/api` is installed. Three contestants on the same
// scripted one-tool-call invocation, interleaved in one process, CPU time per invocation:
//   off      `tracing: null` (the floor: no spans at all)
//   default  no option, no SDK registered (what an app with the API but without an SDK pays)
//   sdk      no option, a BasicTracerProvider with no processor registered globally (spans are recorded, then dropped)
// Reports each one's cost and its ratio to `off` (median of per-round ratios). Run with `npm run bench:runner-tracing`.
//
//   node bench/runner-tracing.bench.mjs [--rounds 31] [--batch-ms 100] [--warmup-ms 500]

import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchArgs } from './args.mjs';
import { gitCommit } from './run-info.mjs';
import { pairedRatio, summary } from './stats.mjs';

const require = createRequire(import.meta.url);
const { Runner } = require('../dist/src/runner/runner.js');
const { InMemorySessionService } = require('../dist/src/services/sessions/in-memory-session-service.js');
const { trace } = require('@opentelemetry/api');
const { BasicTracerProvider } = require('@opentelemetry/sdk-trace-base');

const args = benchArgs(['rounds', 'batch-ms', 'warmup-ms']);
const ROUNDS = Number(args.rounds ?? 31);
const BATCH_MS = Number(args['batch-ms'] ?? 100);
const WARMUP_MS = Number(args['warmup-ms'] ?? 500);

const lookup = { name: 'lookup', execute: () => ({ ok: true }) };
/** One tool call, then an answer once the call was answered: the same turns every invocation. */
const model = {
  name: 'bench-model',
  generate: async (request) => (request.contents.at(-1)?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ id: 'c1', name: 'lookup', args: { q: 'x' } }] }),
};

/** A Runner on a fresh session service, with `tracing` as given (`undefined`: the option is absent). */
function runnerWith(tracing) {
  const options = { appName: 'bench', agent: { name: 'bench-agent', model, tools: [lookup] }, sessionService: new InMemorySessionService() };
  return new Runner(tracing === undefined ? options : { ...options, tracing });
}

const sdk = new BasicTracerProvider();
const contestants = [
  { name: 'off', runner: runnerWith(null), global: null },
  { name: 'default', runner: runnerWith(undefined), global: null },
  { name: 'sdk', runner: runnerWith(undefined), global: sdk },
];

/** Runs invocations for about `ms`; returns the count and the CPU and wall time they took. */
async function batch(contestant, ms) {
  trace.disable();
  if (contestant.global) trace.setGlobalTracerProvider(contestant.global);
  let count = 0;
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  while (performance.now() - wall0 < ms) {
    await contestant.runner.run({ userId: 'u', message: 'hi' });
    count += 1;
  }
  const cpu = process.cpuUsage(cpu0);
  return { count, wall: (performance.now() - wall0) / count, cpu: (cpu.user + cpu.system) / 1000 / count };
}

for (const contestant of contestants) await batch(contestant, WARMUP_MS);
for (const contestant of contestants) contestant.samples = [];
for (let round = 0; round < ROUNDS; round += 1) {
  const order = round % 2 === 0 ? contestants : [...contestants].reverse();
  for (const contestant of order) contestant.samples.push(await batch(contestant, BATCH_MS));
}
trace.disable();

const [off] = contestants;
console.log(`runner tracing bench: ${ROUNDS} rounds × ${BATCH_MS} ms, commit ${gitCommit()}, node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()[0].toFixed(2)}`);
for (const contestant of contestants) {
  const { cpu, iqr } = summary(contestant.samples);
  const ratio = contestant === off ? 1 : pairedRatio(contestant, off, 'cpu');
  console.log(`${contestant.name.padEnd(8)} ${(cpu * 1000).toFixed(1).padStart(7)} µs CPU per invocation (iqr ${(iqr * 100).toFixed(0)} %)  ×${ratio.toFixed(3)} of off`);
}
