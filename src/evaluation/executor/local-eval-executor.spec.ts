import { randomBytes } from 'node:crypto';
import { InMemorySessionService } from '../../services/sessions/in-memory-session-service';
import type { Model, ModelRequest, ModelResponse } from '../../runner/models/model.types';
import { RunRegistry } from '../../runner/runs/run-registry';
import { Runner } from '../../runner/runner';
import type { SessionRef } from '../../runner/session.types';
import { untilAborted } from '../../shared/async/abortable';
import { ManualClock } from '../../shared/time/manual-clock';
import type { EvalCase, EvalExecution, EvalMetric, EvalResult, EvalTaskOutcome } from '../eval.types';
import { EVAL_USER_ID } from './case-run';
import { LocalEvalExecutor } from './local-eval-executor';
import { compareResults } from './regression-report';

const APP = 'eval-tests';
const AGENT = 'assistant';
const METRICS: readonly EvalMetric[] = [
  { name: 'response_match', threshold: 0.8, match: 'rouge_1' },
  { name: 'tool_trajectory', threshold: 1 },
  { name: 'tool_trajectory_in_order', threshold: 1 },
];

/** What the model does for one user input at one turn (the number of tool turns so far). */
type Step = ModelResponse | 'hang' | 'throw';

/** A deterministic model answering each input by a plan, so every case of a job behaves the same whatever ran before. */
class PlannedModel implements Model {
  readonly name = 'planned';
  readonly inputs: string[] = [];
  constructor(private readonly plan: (input: string, turn: number) => Step) {}

  async generate(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const user = request.contents.find((entry) => entry.role === 'user');
    const input = user?.role === 'user' ? user.content.parts.map((part) => ('text' in part ? part.text : '')).join('') : '';
    const turn = request.contents.filter((entry) => entry.role === 'model').length;
    if (turn === 0) this.inputs.push(input);
    const step = this.plan(input, turn);
    if (step === 'hang') return untilAborted(new Promise<ModelResponse>(() => undefined), signal);
    if (step === 'throw') throw new Error('model exploded');
    return step;
  }
}

/** The weather assistant: weather then time for "... in <City>", a greeting otherwise; `dropTimeFor` skips the time call for one city. */
function assistantPlan(options: { readonly dropTimeFor?: string } = {}) {
  return (input: string, turn: number): Step => {
    if (input === 'slow') return 'hang';
    if (input === 'boom') return 'throw';
    if (input === 'transfer') return { toolCalls: [{ name: 'transfer', args: { amount: 10 } }] };
    if (input === 'misbehave') return turn === 0 ? { toolCalls: [{ name: 'no_such_tool', args: { q: 1 } }, { name: 'forbidden', args: {} }] } : { text: 'gave up' };
    const city = /in (\w+)/.exec(input)?.[1];
    if (city === undefined) return { text: 'Hello! How can I help?' };
    const dropTime = options.dropTimeFor === city;
    if (turn === 0) return { toolCalls: [{ name: 'get_weather', args: { city } }] };
    if (turn === 1 && !dropTime) return { toolCalls: [{ name: 'get_time', args: { city } }] };
    return { text: `Sunny in ${city} at noon.` };
  };
}

/** Records the sessions the Runner creates and deletes; can refuse every delete. */
class RecordingSessionService extends InMemorySessionService {
  readonly created: Array<{ readonly userId: string; readonly sessionId?: string }> = [];
  readonly deleted: string[] = [];
  failDeletes = false;

  override async createSession(input: Parameters<InMemorySessionService['createSession']>[0]) {
    this.created.push({ userId: input.userId, sessionId: input.sessionId });
    return super.createSession(input);
  }

  override async deleteSession(ref: SessionRef) {
    this.deleted.push(ref.sessionId);
    if (this.failDeletes) throw new Error('store down');
    return super.deleteSession(ref);
  }

  /** Sessions the evaluation user still has. */
  remaining() {
    return this.listSessions({ appName: APP, userId: EVAL_USER_ID });
  }
}

function setup(plan = assistantPlan(), clock = new ManualClock()) {
  const model = new PlannedModel(plan);
  const sessions = new RecordingSessionService();
  const tool = (name: string, answer: () => unknown, extra = {}) => ({ name, execute: answer, ...extra }) as never;
  const runner = new Runner({
    appName: APP,
    sessionService: sessions,
    runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['forbidden'], allow: 'all' } },
    agent: {
      name: AGENT,
      model,
      tools: [tool('get_weather', () => ({ sky: 'sunny' })), tool('get_time', () => ({ time: '12:00' })), tool('transfer', () => ({ ok: true }), { requireConfirmation: true }), tool('forbidden', () => ({}))],
    },
  });
  const registry = new RunRegistry({ runners: [runner] });
  return { model, sessions, runner, registry, clock, executor: new LocalEvalExecutor(registry, { clock }) };
}

const weatherCase = (case_id: string, city: string): EvalCase => ({
  case_id,
  input: `weather and time in ${city}`,
  expected_output: `Sunny in ${city} at noon`,
  expected_tool_calls: [
    { name: 'get_weather', args: { city } },
    { name: 'get_time', args: { city } },
  ],
});
const helloCase = (case_id = 'hello'): EvalCase => ({ case_id, input: { role: 'user', parts: [{ text: 'hello' }] }, expected_output: 'hello how can i help' });
const failingCase = (case_id: string, input: string): EvalCase => ({ case_id, input, expected_output: 'anything', expected_tool_calls: [] });
const WEATHER_SET = [weatherCase('oslo', 'Oslo'), weatherCase('paris', 'Paris'), helloCase()];

function job(cases: readonly EvalCase[], options: EvalExecution['options'] = {}, agent = AGENT): EvalExecution {
  return { job_id: `eval-${randomBytes(16).toString('hex')}`, scope: { app: 'tests' }, agent, set: { id: 'weather', version: '1', cases }, metrics: METRICS, options };
}

async function completedResult(outcome: Promise<EvalTaskOutcome>): Promise<EvalResult> {
  const settled = await outcome;
  if (settled.status !== 'completed') throw new Error(`expected a completed outcome, got ${settled.reason}`);
  return settled.result;
}

async function until(predicate: () => boolean): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > 2000) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('LocalEvalExecutor (spec 05 §7)', () => {
  describe('a passing agent', () => {
    it('completes with every metric at 1 and passed true', async () => {
      const { executor } = setup();
      const result = await completedResult(executor.start(job(WEATHER_SET), new AbortController().signal));
      expect(result.passed).toBe(true);
      expect(result.metrics).toEqual({
        response_match: { score: 1, threshold: 0.8, passed: true },
        tool_trajectory: { score: 1, threshold: 1, passed: true },
        tool_trajectory_in_order: { score: 1, threshold: 1, passed: true },
      });
      expect(result.cases.map((item) => [item.case_id, item.passed, item.error])).toEqual([
        ['oslo', true, null],
        ['paris', true, null],
        ['hello', true, null],
      ]);
      expect(result.cases[0]).toMatchObject({
        actual_output: 'Sunny in Oslo at noon.',
        actual_tool_calls: [
          { name: 'get_weather', args: { city: 'Oslo' } },
          { name: 'get_time', args: { city: 'Oslo' } },
        ],
        truncated: false,
      });
      expect(result.cases[2].scores).toEqual({ response_match: 1, tool_trajectory: null, tool_trajectory_in_order: null });
      expect(Object.isFrozen(result)).toBe(true);
    });

    it('runs each case as the evaluation user in the session <job id>-<index>, one after another, and deletes every session', async () => {
      const { executor, sessions, model } = setup();
      const evalJob = job(WEATHER_SET);
      await completedResult(executor.start(evalJob, new AbortController().signal));
      const ids = [0, 1, 2].map((index) => `${evalJob.job_id}-${index}`);
      expect(sessions.created).toEqual(ids.map((sessionId) => ({ userId: EVAL_USER_ID, sessionId })));
      expect(ids.every((id) => id.length <= 42)).toBe(true);
      expect(model.inputs).toEqual(['weather and time in Oslo', 'weather and time in Paris', 'hello']);
      expect(sessions.deleted).toEqual(ids);
      expect(await sessions.remaining()).toEqual([]);
    });

    it('returns a promise at once', () => {
      const { executor } = setup();
      const outcome = executor.start(job([helloCase()]), new AbortController().signal);
      expect(outcome).toBeInstanceOf(Promise);
      return outcome;
    });
  });

  describe('an agent that drops one of two expected tool calls', () => {
    it('scores tool_trajectory 0 and tool_trajectory_in_order 0.5 for that case', async () => {
      const { executor } = setup(assistantPlan({ dropTimeFor: 'Oslo' }));
      const result = await completedResult(executor.start(job(WEATHER_SET), new AbortController().signal));
      const oslo = result.cases[0];
      expect(oslo.scores).toEqual({ response_match: 1, tool_trajectory: 0, tool_trajectory_in_order: 0.5 });
      expect(oslo.passed).toBe(false);
      expect(oslo.error).toBeNull();
      expect(result.cases[1].passed).toBe(true);
      expect(result.metrics.tool_trajectory).toEqual({ score: 0.5, threshold: 1, passed: false });
      expect(result.metrics.tool_trajectory_in_order).toEqual({ score: 0.75, threshold: 1, passed: false });
      expect(result.passed).toBe(false);
    });

    it('is named, with exactly that case, by compareResults against the passing baseline', async () => {
      const passing = setup();
      const baselineJob = job(WEATHER_SET);
      const baseline = await completedResult(passing.executor.start(baselineJob, new AbortController().signal));
      const dropping = setup(assistantPlan({ dropTimeFor: 'Oslo' }));
      const candidateJob = job(WEATHER_SET);
      const candidate = await completedResult(dropping.executor.start(candidateJob, new AbortController().signal));

      const report = compareResults({ job_id: baselineJob.job_id, result: baseline }, { job_id: candidateJob.job_id, result: candidate });
      expect(report.regressed).toBe(true);
      expect(report.baseline_job_id).toBe(baselineJob.job_id);
      expect(report.candidate_job_id).toBe(candidateJob.job_id);
      expect(report.metrics.response_match.regressed).toBe(false);
      expect(report.metrics.tool_trajectory).toEqual({ baseline_score: 1, candidate_score: 0.5, delta: -0.5, threshold: 1, passed: false, regressed: true });
      expect(report.metrics.tool_trajectory_in_order).toMatchObject({ baseline_score: 1, candidate_score: 0.75, regressed: true });
      expect(report.cases).toEqual([{ case_id: 'oslo', regressed_metrics: ['tool_trajectory', 'tool_trajectory_in_order'] }]);
      expect(JSON.stringify(report)).not.toMatch(/Oslo|Sunny|get_time|city/);

      const again = await completedResult(setup().executor.start(job(WEATHER_SET), new AbortController().signal));
      const same = compareResults({ job_id: baselineJob.job_id, result: baseline }, { job_id: 'eval-again', result: again });
      expect(same.regressed).toBe(false);
      expect(same.cases).toEqual([]);
    });
  });

  describe('cases that end early', () => {
    it('a pause for confirmation records run_paused and scores 0; the job continues and the session is deleted', async () => {
      const { executor, sessions } = setup();
      const result = await completedResult(executor.start(job([failingCase('pay', 'transfer'), helloCase()]), new AbortController().signal));
      expect(result.cases[0]).toMatchObject({
        error: 'run_paused',
        passed: false,
        scores: { response_match: 0, tool_trajectory: 0, tool_trajectory_in_order: 0 },
        actual_output: '',
        actual_tool_calls: [{ name: 'transfer', args: { amount: 10 } }],
      });
      expect(result.cases[1]).toMatchObject({ case_id: 'hello', passed: true, error: null });
      expect(await sessions.remaining()).toEqual([]);
    });

    it('a case past case_timeout_ms records case_timeout and the next case runs', async () => {
      const { executor, sessions, model, clock } = setup();
      let settled = false;
      const outcome = executor.start(job([failingCase('slow', 'slow'), helloCase()], { case_timeout_ms: 1000 }), new AbortController().signal);
      void outcome.then(() => (settled = true));
      await until(() => model.inputs.includes('slow'));
      clock.advance(999);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(settled).toBe(false);
      clock.advance(1);
      const result = await completedResult(outcome);
      expect(result.cases[0]).toMatchObject({ error: 'case_timeout', passed: false, scores: { response_match: 0, tool_trajectory: 0 } });
      expect(result.cases[1]).toMatchObject({ error: null, passed: true });
      expect(clock.pendingTimers).toBe(0);
      expect(await sessions.remaining()).toEqual([]);
    });

    it('a real short timeout works on the system clock too', async () => {
      const { model, sessions, runner } = setup();
      const executor = new LocalEvalExecutor({ getRunner: () => runner });
      const result = await completedResult(executor.start(job([failingCase('slow', 'slow')], { case_timeout_ms: 20 }), new AbortController().signal));
      expect(result.cases[0].error).toBe('case_timeout');
      expect(model.inputs).toEqual(['slow']);
      expect(await sessions.remaining()).toEqual([]);
    });

    it("a Runner error records the Runner's code: a throwing model gives model_failed", async () => {
      const { executor } = setup();
      const result = await completedResult(executor.start(job([failingCase('boom', 'boom'), helloCase()]), new AbortController().signal));
      expect(result.cases[0]).toMatchObject({ error: 'model_failed', passed: false, scores: { response_match: 0, tool_trajectory: 0, tool_trajectory_in_order: 0 } });
      expect(result.cases[1].passed).toBe(true);
    });

    it('an invalid input is the Runner error invalid_run_request', async () => {
      const { executor } = setup();
      const result = await completedResult(executor.start(job([{ case_id: 'bad', input: 42, expected_output: 'x' }]), new AbortController().signal));
      expect(result.cases[0]).toMatchObject({ error: 'invalid_run_request', scores: { response_match: 0 } });
    });

    it('anything but a RunnerError is evaluation_case_failed', async () => {
      const executor = new LocalEvalExecutor({
        getRunner: () => ({
          appName: APP,
          runAsync: () => {
            throw new Error('not a runner');
          },
        }),
      });
      const result = await completedResult(executor.start(job([helloCase()]), new AbortController().signal));
      expect(result.cases[0]).toMatchObject({ error: 'evaluation_case_failed', passed: false, scores: { response_match: 0 } });
    });
  });

  describe('the trajectory', () => {
    it('includes unknown and denied calls, in model order', async () => {
      const { executor } = setup();
      const evalCase: EvalCase = {
        case_id: 'misbehave',
        input: 'misbehave',
        expected_tool_calls: [
          { name: 'no_such_tool', args: { q: 1 } },
          { name: 'forbidden', args: {} },
        ],
      };
      const result = await completedResult(executor.start(job([evalCase]), new AbortController().signal));
      expect(result.cases[0].actual_tool_calls).toEqual(evalCase.expected_tool_calls);
      expect(result.cases[0]).toMatchObject({ passed: true, scores: { tool_trajectory: 1, tool_trajectory_in_order: 1 } });
    });
  });

  describe('job abort and unknown agents', () => {
    it('an abort mid-case rejects with the reason, runs no further case and leaves no session', async () => {
      const { executor, sessions, model } = setup();
      const controller = new AbortController();
      const outcome = executor.start(job([helloCase('first'), failingCase('slow', 'slow'), helloCase('last')]), controller.signal);
      await until(() => model.inputs.includes('slow'));
      controller.abort('user_cancelled');
      await expect(outcome).rejects.toBe('user_cancelled');
      expect(model.inputs).toEqual(['hello', 'slow']);
      expect(await sessions.remaining()).toEqual([]);
    });

    it('a signal aborted before the start rejects without running a case', async () => {
      const { executor, model, sessions } = setup();
      const controller = new AbortController();
      controller.abort('deadline_exceeded');
      await expect(executor.start(job([helloCase()]), controller.signal)).rejects.toBe('deadline_exceeded');
      expect(model.inputs).toEqual([]);
      expect(sessions.created).toEqual([]);
    });

    it('an agent the registry does not know gives the outcome unknown_eval_agent', async () => {
      const { executor } = setup();
      await expect(executor.start(job([helloCase()], {}, 'nobody'), new AbortController().signal)).resolves.toEqual({ status: 'error', reason: 'unknown_eval_agent' });
    });

    it('any other failure of the registry rejects', async () => {
      const failure = new Error('registry broke');
      const executor = new LocalEvalExecutor({
        getRunner: () => {
          throw failure;
        },
      });
      await expect(executor.start(job([helloCase()]), new AbortController().signal)).rejects.toBe(failure);
    });
  });

  it('ignores a failing session delete', async () => {
    const { executor, sessions } = setup();
    sessions.failDeletes = true;
    const result = await completedResult(executor.start(job([helloCase()]), new AbortController().signal));
    expect(result.cases[0].passed).toBe(true);
    expect(sessions.deleted).toHaveLength(1);
  });

  it('refuses a registry without getRunner and a clock without timers', () => {
    expect(() => new LocalEvalExecutor({} as never)).toThrow(expect.objectContaining({ code: 'invalid_eval_service_options', details: { field: 'registry' } }));
    expect(() => new LocalEvalExecutor({ getRunner: () => ({}) as never }, { clock: {} as never })).toThrow(
      expect.objectContaining({ code: 'invalid_eval_service_options', details: { field: 'clock' } }),
    );
  });
});
