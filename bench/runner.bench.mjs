// Runner benchmark (issue 8 acceptance): the per-tool-call overhead of the Runner with admission and
// the runtime policy against the same Runner with both disabled, on a scripted model, in one process,
// contestants interleaved. Target: ≤ 5 % overhead per tool call. Run with `npm run bench:runner`;
// see bench/README.md ("Runner benchmark").
//
//   node bench/runner.bench.mjs [--rounds 31] [--batch-ms 100] [--warmup-ms 500] [--only 1x1|1x8|4x4|ops]
//
// Under `node --cpu-prof` add `--only <part>` so the profile holds one workload (all six contestants).
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pairedRatio, summary } from './stats.mjs';
import { benchArgs } from './args.mjs';

const require = createRequire(import.meta.url);
const { Runner } = require('../dist/src/runner/runner.js');
const { ScriptedModel } = require('../dist/src/runner/models/scripted-model.js');
const { InMemorySessionService } = require('../dist/src/services/sessions/in-memory-session-service.js');
const { AdmissionController } = require('../dist/src/admission/admission-controller.js');
const { RuntimePolicy, screenCheck } = require('../dist/src/policy/runtime-policy.js');

const args = benchArgs(['rounds', 'batch-ms', 'warmup-ms', 'only']);
const ROUNDS = Number(args.rounds ?? 31);
const BATCH_MS = Number(args['batch-ms'] ?? 100);
const WARMUP_MS = Number(args['warmup-ms'] ?? 500);
const TARGET = 0.05; // overhead per tool call, as a share of A's cost per tool call

const APP = 'bench';
const AGENT = 'bench-agent';
const TOOL = 'lookup';
const USER = 'u-bench';
const MESSAGE = 'What is the weather in Oslo tomorrow?';
const FINAL = 'Tomorrow in Oslo: 7 °C and light rain.';

// ---- workloads: tool turns of N calls to a trivial tool, then a final text -------------------------

/** `turns` tool turns of `calls` calls each, then the final text. Call ids are unique in the run. */
function workload(name, turns, calls) {
  const steps = [];
  for (let t = 0; t < turns; t++) {
    steps.push(Object.freeze({ toolCalls: Object.freeze(Array.from({ length: calls }, (_, i) => Object.freeze({ id: `t${t}-c${i}`, name: TOOL, args: Object.freeze({ city: 'Oslo', day: 'tomorrow', n: i }) }))) }));
  }
  steps.push(Object.freeze({ text: FINAL }));
  return { name, turns, calls, toolCalls: turns * calls, modelCalls: turns + 1, steps: Object.freeze(steps) };
}
const WORKLOADS = [workload('1x1', 1, 1), workload('1x8', 1, 8), workload('4x4', 4, 4)];
const workloads = args.only ? WORKLOADS.filter((w) => w.name === args.only) : WORKLOADS;
if (workloads.length === 0 && args.only !== 'ops') throw new Error(`--only: unknown part ${args.only}; one of ${WORKLOADS.map((w) => w.name).join(', ')}, ops`);

/** The trivial tool: no schema, no confirmation, a small synchronous result. */
const lookup = { name: TOOL, description: 'Weather of a city.', execute: (a) => ({ city: a.city, day: a.day, temp_c: 7, n: a.n }) };

/**
 * The agent's model: each run gets a fresh ScriptedModel (a script is consumed), built before the
 * batch's clock starts; this forwarder hands every call to the current one. Same in every contestant.
 */
const forwarder = { current: null };
const model = { name: 'scripted', generate: (request, signal) => forwarder.current.generate(request, signal) };
const agent = { name: AGENT, model, instruction: 'Answer weather questions with the lookup tool.', tools: [lookup] };

// ---- contestants ----------------------------------------------------------------------------------

/** Allows the agent and the tool, with the default budgets (64 KiB of arguments, 1 MiB of content). */
const POLICY_SPEC = { id: 'bench-policy', agents: { allow: [AGENT] }, tools: { allow: [TOOL] }, maxArgumentBytes: 65_536, maxContentBytes: 1_048_576 };
const policy = RuntimePolicy.compile(POLICY_SPEC);
/** What a service would configure: limits that never bind for one run at a time, queueing with a deadline. */
const controller = new AdmissionController({ globalLimit: 256, defaultAgentLimit: 32, overflow: 'queue', maxQueue: 1024, defaultQueueTimeoutMs: 30_000 });
const admission = { controller };

const RUNNERS = [
  { key: 'A', label: 'A  Runner, neither', extra: {} },
  { key: 'B', label: 'B  Runner + admission + policy', extra: { admission, runtimePolicy: policy } },
  { key: 'Ca', label: 'Ca Runner + admission only', extra: { admission } },
  { key: 'Cp', label: 'Cp Runner + policy only', extra: { runtimePolicy: policy } },
  { key: 'Ax', label: "Ax Runner A + B's checks beside it", extra: {}, beside: besideChecks },
];

/**
 * Ax: after each run of Runner A, the bench itself makes the calls B's Runner makes to the policy and
 * the controller on the same inputs, as the Runner makes them (the policy's screened checks, which
 * build a decision record only for a denial; per run: agent, agent_input, model_output, acquire +
 * release with an owner signal; per tool call: tool, tool_result). Ax − A is what those calls
 * cost amid the Runner's work; B − Ax is then the Runner's own handling of them.
 */
function besideChecks(w) {
  const calls = w.steps.flatMap((step) => step.toolCalls ?? []);
  const wrappers = calls.map((call) => ({ success: true, result: lookup.execute(call.args) }));
  const output = { role: 'model', parts: [{ text: FINAL }] };
  const owner = new AbortController().signal;
  return async () => {
    const permit = await controller.acquire(AGENT, { owner });
    blackhole += (screenCheck(policy, 'agent', AGENT, MESSAGE) === null) + (screenCheck(policy, 'content', 'agent_input', MESSAGE) === null);
    for (let i = 0; i < calls.length; i++) blackhole += (screenCheck(policy, 'tool', TOOL, calls[i].args) === null) + (screenCheck(policy, 'content', 'tool_result', wrappers[i]) === null);
    blackhole += screenCheck(policy, 'content', 'model_output', output) === null;
    controller.release(permit);
  };
}

/**
 * A Runner contestant. Per batch (outside the clock): a fresh InMemorySessionService, a Runner on it
 * and one fresh ScriptedModel per run; every run then creates its own session (generated id).
 */
function runnerContestant(spec, w) {
  return {
    ...spec,
    prepare(runs) {
      const runner = new Runner({ appName: APP, agent, sessionService: new InMemorySessionService(), ...spec.extra });
      const models = Array.from({ length: runs }, () => new ScriptedModel(w.steps));
      const beside = spec.beside?.(w);
      return async () => {
        for (let i = 0; i < runs; i++) {
          forwarder.current = models[i];
          const result = await runner.run({ userId: USER, message: MESSAGE });
          if (result.status !== 'completed') throw new Error(`${spec.key}: run ended ${result.status}`);
          if (beside !== undefined) await beside();
        }
      };
    },
  };
}

/** The floor: the tool function called directly, as many times as a run calls it, each result awaited. */
function floorContestant(w) {
  const calls = w.steps.flatMap((step) => step.toolCalls ?? []);
  const ctx = Object.freeze({ appName: APP, userId: USER, sessionId: 's', invocationId: 'inv', agentName: AGENT, state: {}, callId: 'c', signal: new AbortController().signal, idempotencyKey: 'inv:c' });
  return {
    key: 'floor',
    label: `floor: lookup.execute() × ${w.toolCalls}`,
    prepare(runs) {
      return async () => {
        for (let i = 0; i < runs; i++) for (const call of calls) blackhole += (await lookup.execute(call.args, ctx)).temp_c;
      };
    },
  };
}
let blackhole = 0;

// ---- sanity: the runs do what they claim -----------------------------------------------------------

/**
 * One run per contestant, checked from the stored session: the event kinds in order, every tool
 * response a success, no audit event. For the contestants with a policy, one more run calling a
 * tool the policy does not allow must be denied with an audit event (so the policy is really on);
 * for those with admission, the tool must see a permit held while it runs.
 */
async function sanity(w) {
  const expected = ['user_message', ...Array.from({ length: w.turns }, () => ['model_turn', ...Array(w.calls).fill('tool_response')]).flat(), 'final_output'];
  for (const spec of RUNNERS) {
    let activeSeen = -1;
    const probe = { ...lookup, execute: (a) => ((activeSeen = controller.status().active), lookup.execute(a)) };
    const sessions = new InMemorySessionService();
    const runner = new Runner({ appName: APP, agent: { ...agent, tools: [probe] }, sessionService: sessions, ...spec.extra });
    forwarder.current = new ScriptedModel(w.steps);
    const result = await runner.run({ userId: USER, message: MESSAGE });
    const events = await sessions.listEvents({ appName: APP, userId: USER, sessionId: result.session_id });
    check(result.status === 'completed' && result.output?.parts?.[0]?.text === FINAL, `${spec.key}: run did not complete with the final text`);
    check(events.map((e) => e.kind).join() === expected.join(), `${spec.key}: events ${events.map((e) => e.kind).join()}`);
    check(events.filter((e) => e.kind === 'tool_response').every((e) => e.content.response.success === true && e.content.response.result.temp_c === 7), `${spec.key}: a tool response is not the tool's result`);
    check(activeSeen === (spec.extra.admission ? 1 : 0), `${spec.key}: ${activeSeen} permits held while the tool ran`);
    if (spec.extra.runtimePolicy) {
      forwarder.current = new ScriptedModel([{ toolCalls: [{ id: 'x', name: 'shell', args: {} }] }, { text: FINAL }]);
      const denied = await runner.run({ userId: USER, message: MESSAGE });
      const kinds = (await sessions.listEvents({ appName: APP, userId: USER, sessionId: denied.session_id })).map((e) => e.kind);
      check(kinds.includes('policy_audit'), `${spec.key}: a call to a tool the policy does not allow was not audited`);
    }
  }
  check(controller.status().active === 0, 'a permit is still held after the sanity runs');
}

function check(condition, message) {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

// ---- timing ----------------------------------------------------------------------------------------

/** Wall and CPU µs per run over one batch of `runs` runs; preparation is outside the clock. */
async function timeBatch(contestant, runs) {
  const go = contestant.prepare(runs);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await go();
  const wall = Number(process.hrtime.bigint() - t0) / 1e3 / runs;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / runs };
}

/** Runs the contestant for WARMUP_MS (JIT, and the batch size for about BATCH_MS). */
async function warmUp(contestant) {
  const t0 = performance.now();
  let runs = 0;
  let size = 1;
  do {
    await contestant.prepare(size)();
    runs += size;
    size = Math.min(size * 2, 256);
  } while (performance.now() - t0 < WARMUP_MS);
  const perRunMs = (performance.now() - t0) / runs;
  return Math.max(1, Math.round(BATCH_MS / perRunMs));
}

/** Warm-up of each contestant, then ROUNDS rounds timing one batch of each, in an order rotated by one per round. */
async function contest(contestants) {
  const sizes = [];
  for (const c of contestants) sizes.push(await warmUp(c));
  const samples = contestants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (k + round) % contestants.length;
      samples[i][round] = await timeBatch(contestants[i], sizes[i]);
    }
  }
  check(controller.status().active === 0 && controller.status().queue_length === 0, 'a permit is still held after the timed runs');
  return contestants.map((c, i) => ({
    ...c,
    runs: sizes[i],
    samples: samples[i],
    ...summary(samples[i]),
  }));
}




// ---- the operations B adds, alone ----------------------------------------------------------------

/**
 * What B does that A does not, each operation in a tight loop on the inputs of the runs, as the
 * Runner makes it (the screened checks: an allow builds no decision record): per tool call the tool
 * check on the call's arguments and the `tool_result` check on its response wrapper; per run the
 * agent and `agent_input` checks on the message, the `model_output` check on the final Content, and
 * one admission acquire + release with an owner signal (the Runner passes its invocation signal).
 */
function operationContestants() {
  const callArgs = WORKLOADS[1].steps[0].toolCalls[0].args;
  const wrapper = { success: true, result: lookup.execute(callArgs) };
  const output = { role: 'model', parts: [{ text: FINAL }] };
  const owner = new AbortController().signal;
  const sync = (key, label, per, fn) => ({ key, label, per, prepare: (runs) => async () => { for (let i = 0; i < runs; i++) blackhole += fn() === null; } });
  return [
    sync('tool', `screenCheck(policy, 'tool', '${TOOL}', args)`, 'call', () => screenCheck(policy, 'tool', TOOL, callArgs)),
    sync('result', "screenCheck(policy, 'content', 'tool_result', wrapper)", 'call', () => screenCheck(policy, 'content', 'tool_result', wrapper)),
    sync('agent', "screenCheck(policy, 'agent', agent, message)", 'run', () => screenCheck(policy, 'agent', AGENT, MESSAGE)),
    sync('input', "screenCheck(policy, 'content', 'agent_input', message)", 'run', () => screenCheck(policy, 'content', 'agent_input', MESSAGE)),
    sync('output', "screenCheck(policy, 'content', 'model_output', content)", 'run', () => screenCheck(policy, 'content', 'model_output', output)),
    {
      key: 'permit',
      label: 'await controller.acquire(agent, {owner}) + release',
      per: 'run',
      prepare: (runs) => async () => {
        for (let i = 0; i < runs; i++) controller.release(await controller.acquire(AGENT, { owner }));
      },
    },
  ];
}

function printOperations(rows, results) {
  console.log('\nthe operations B adds to A, each alone in a tight loop (same rounds and medians as above)');
  console.log(`  ${pad('operation', 52)}${lpad('per', 5)}${lpad('wall', 10)}${lpad('cpu', 10)}${lpad('IQR', 6)}`);
  for (const r of rows) console.log(`  ${pad(r.label, 52)}${lpad(r.per, 5)}${lpad(us(r.wall), 10)}${lpad(us(r.cpu), 10)}${lpad(`${(r.iqr * 100).toFixed(0)}%`, 6)}`);
  const sum = (per) => rows.filter((r) => r.per === per).reduce((total, r) => total + r.cpu, 0);
  const perCall = sum('call');
  const perRun = sum('run');
  console.log(`  sum per tool call ${us(perCall)} cpu, per run ${us(perRun)} cpu`);
  for (const r of results) {
    const measured = r.by.B.cpu - r.by.A.cpu;
    const predicted = r.w.toolCalls * perCall + perRun;
    console.log(`  ${pad(r.w.name, 5)} B−A measured ${us(measured)} cpu per run; these operations alone: ${r.w.toolCalls} × ${us(perCall)} + ${us(perRun)} = ${us(predicted)} (${((predicted / measured) * 100).toFixed(0)} % of it)`);
  }
}

// ---- report ----------------------------------------------------------------------------------------

const us = (n) => (Math.abs(n) >= 100 ? `${n.toFixed(0)} µs` : Math.abs(n) >= 10 ? `${n.toFixed(1)} µs` : `${n.toFixed(2)} µs`);
const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const ratio = (x) => `${x.toFixed(2)}×`;
const pad = (text, width) => String(text).padEnd(width);
const lpad = (text, width) => String(text).padStart(width);
const verdict = (x) => (x <= TARGET ? 'MET' : 'MISSED');

function printWorkload(w, rows) {
  const by = Object.fromEntries(rows.map((r) => [r.key, r]));
  const n = w.toolCalls;
  console.log(`\nworkload ${w.name}: ${w.turns} tool turn${w.turns > 1 ? 's' : ''} of ${w.calls} call${w.calls > 1 ? 's' : ''} to \`${TOOL}\`, then a final text (${w.modelCalls} model calls, ${n} tool call${n > 1 ? 's' : ''} per run)`);
  console.log(`  ${pad('contestant', 34)}${lpad('runs', 6)}${lpad('wall/run', 11)}${lpad('cpu/run', 11)}${lpad('IQR', 6)}${lpad('wall/call', 11)}${lpad('cpu/call', 11)}${lpad('vs A wall', 11)}${lpad('cpu', 8)}`);
  for (const r of rows) {
    console.log(
      `  ${pad(r.label, 34)}${lpad(r.runs, 6)}${lpad(us(r.wall), 11)}${lpad(us(r.cpu), 11)}${lpad(`${(r.iqr * 100).toFixed(0)}%`, 6)}` +
        `${lpad(us(r.wall / n), 11)}${lpad(us(r.cpu / n), 11)}${lpad(ratio(r.wall / by.A.wall), 11)}${lpad(ratio(r.cpu / by.A.cpu), 8)}`,
    );
  }
  const over = (x) => ({ wall: (by[x].wall - by.A.wall) / n, cpu: (by[x].cpu - by.A.cpu) / n });
  const b = over('B');
  console.log(`  B/A: ${ratio(by.B.wall / by.A.wall)} wall, ${ratio(by.B.cpu / by.A.cpu)} cpu (median of per-round ratios: ${ratio(pairedRatio(by.B, by.A, 'wall'))} wall, ${ratio(pairedRatio(by.B, by.A, 'cpu'))} cpu)`);
  console.log(`  overhead per tool call (B−A)/${n}: ${us(b.wall)} wall = ${pct(b.wall / (by.A.wall / n))} of A's ${us(by.A.wall / n)}; ${us(b.cpu)} cpu = ${pct(b.cpu / (by.A.cpu / n))} of A's ${us(by.A.cpu / n)}`);
  console.log(`    of which admission alone (Ca−A)/${n}: ${us(over('Ca').cpu)} cpu; policy alone (Cp−A)/${n}: ${us(over('Cp').cpu)} cpu`);
  console.log(`    B's checks made beside Runner A (Ax−A)/${n}: ${us(over('Ax').cpu)} cpu (paired ${pct(pairedRatio(by.Ax, by.A, 'cpu') - 1)} of A); the Runner's own handling of them (B−Ax)/${n}: ${us((by.B.cpu - by.Ax.cpu) / n)} cpu`);
  console.log(`  the Runner's own cost per tool call over the floor (A−floor)/${n}: ${us((by.A.wall - by.floor.wall) / n)} wall, ${us((by.A.cpu - by.floor.cpu) / n)} cpu (floor ${us(by.floor.cpu / n)} per call)`);
  return {
    w,
    by,
    share: { wall: b.wall / (by.A.wall / n), cpu: b.cpu / (by.A.cpu / n) },
    paired: { wall: pairedRatio(by.B, by.A, 'wall') - 1, cpu: pairedRatio(by.B, by.A, 'cpu') - 1 },
  };
}

/**
 * The cost of one more call in a turn, from 1x1 and 1x8 (same turns, 7 more calls): the slope
 * separates what each call adds from what every run pays once (admission, agent and input checks,
 * the final-output check, the session).
 */
function printSlope(results) {
  const one = results.find((r) => r.w.name === '1x1');
  const eight = results.find((r) => r.w.name === '1x8');
  if (!one || !eight) return;
  const slope = (key, field) => (eight.by[key][field] - one.by[key][field]) / 7;
  console.log('\nmarginal cost of one more call in a turn, (1x8 − 1x1) / 7, and the fixed cost per run that is left');
  console.log(`  ${pad('contestant', 34)}${lpad('wall/call', 11)}${lpad('cpu/call', 11)}${lpad('cpu fixed/run', 15)}`);
  for (const key of ['A', 'B', 'Ca', 'Cp', 'Ax', 'floor']) {
    const fixed = one.by[key].cpu - slope(key, 'cpu');
    console.log(`  ${pad(one.by[key].label.replace(/ × \d+$/, ''), 34)}${lpad(us(slope(key, 'wall')), 11)}${lpad(us(slope(key, 'cpu')), 11)}${lpad(us(fixed), 15)}`);
  }
  const a = slope('A', 'cpu');
  const b = slope('B', 'cpu');
  const fixedA = one.by.A.cpu - a;
  const fixedB = one.by.B.cpu - b;
  console.log(`  B − A per additional call: ${us(slope('B', 'wall') - slope('A', 'wall'))} wall, ${us(b - a)} cpu = ${pct((b - a) / a)} of A's marginal call; per run once: ${us(fixedB - fixedA)} cpu`);
}

// ---- main ------------------------------------------------------------------------------------------

async function main() {
  const started = performance.now();
  console.log(
    `runner benchmark: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ` +
      `median of ${ROUNDS} batches of ~${BATCH_MS} ms per contestant after a ${WARMUP_MS} ms warm-up, order rotated per round; no forced gc`,
  );
  console.log(`  policy ${JSON.stringify(POLICY_SPEC)}; admission globalLimit 256, defaultAgentLimit 32, overflow queue, maxQueue 1024, queue timeout 30 s; one run at a time`);
  const results = [];
  for (const w of workloads) {
    await sanity(w);
    const rows = await contest([...RUNNERS.map((spec) => runnerContestant(spec, w)), floorContestant(w)]);
    results.push(printWorkload(w, rows));
  }
  printSlope(results);
  if (!args.only || args.only === 'ops') printOperations(await contest(operationContestants()), results);
  console.log(`\ntarget: overhead per tool call (B−A)/calls ≤ ${TARGET * 100} % of A's cost per tool call, i.e. B/A ≤ ${(1 + TARGET).toFixed(2)}× (wall / cpu)`);
  for (const r of results) {
    console.log(
      `  ${pad(r.w.name, 5)} from the medians ${pct(r.share.wall)} / ${pct(r.share.cpu)} → ${verdict(r.share.wall)} / ${verdict(r.share.cpu)};` +
        `  from the per-round ratios ${pct(r.paired.wall)} / ${pct(r.paired.cpu)} → ${verdict(r.paired.wall)} / ${verdict(r.paired.cpu)}`,
    );
  }
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB${blackhole === 0 ? ' ' : ''}`);
}

await main();
