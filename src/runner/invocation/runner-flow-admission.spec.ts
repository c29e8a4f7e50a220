import { AdmissionController } from '../../admission/admission-controller';
import type { AdmissionRequestOptions } from '../../admission/admission-request';
import type { PermitSource } from '../../admission/admission-service';
import { AdmissionError } from '../../admission/admission.errors';
import type { Permit, WorkReport } from '../../admission/permit';
import { RunnerError } from '../runner.errors';
import { countingTool, expectError, makeRunner, runnerError, scriptedAgent, USER, AGENT } from '../testing/runner-harness';
import { isOverloadedModelError } from './invocation-admission';

/** A real controller seen through a source that records each acquire's options and each permit's report. */
class RecordingSource implements PermitSource {
  readonly requests: AdmissionRequestOptions[] = [];
  readonly reports: WorkReport[] = [];
  readonly controller = new AdmissionController({ overflow: 'reject' });
  #issued = new Map<Permit, Permit>();

  async acquire(agentId: string, opts?: AdmissionRequestOptions): Promise<Permit> {
    this.requests.push({ ...opts });
    const permit = await this.controller.acquire(agentId, opts);
    const seen: Permit = Object.freeze({
      id: permit.id,
      agentId: permit.agentId,
      requestRef: permit.requestRef,
      signal: permit.signal,
      settle: (cost: number) => permit.settle(cost),
      report: (report: WorkReport) => {
        this.reports.push(report);
        return permit.report(report);
      },
      [Symbol.dispose]: () => permit[Symbol.dispose](),
    });
    this.#issued.set(seen, permit);
    return seen;
  }

  release(permit: Permit): boolean {
    return this.controller.release(this.#issued.get(permit) ?? permit);
  }
}

const overloaded = (status: number) => () => {
  throw new RunnerError('model_failed', { reason: 'http_status', status });
};

describe('Runner flow options (spec 09 §1): tenant, cost and priority reach acquire', () => {
  it('passes fixed values as they are', async () => {
    const source = new RecordingSource();
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'done' }]), admission: { controller: source, tenant: 'acme', cost: 250, priority: 'low' } });
    await runner.run({ userId: USER, sessionId: 'ses-fixed', message: 'hi' });
    expect(source.requests).toEqual([expect.objectContaining({ tenant: 'acme', cost: 250, priority: 'low' })]);
    expect(source.controller.status().active).toBe(0);
  });

  it('resolves functions of the run (agent, user, session) for each invocation', async () => {
    const source = new RecordingSource();
    const seen: unknown[] = [];
    const runner = makeRunner({
      agent: scriptedAgent([{ text: 'one' }, { text: 'two' }]),
      admission: {
        controller: source,
        tenant: (run) => {
          seen.push(run);
          return `tenant-${run.userId}`;
        },
        cost: () => 7,
        priority: () => 'high',
      },
    });
    await runner.run({ userId: 'u1', sessionId: 'ses-a', message: 'hi' });
    await runner.run({ userId: 'u2', sessionId: 'ses-b', message: 'hi' });
    expect(seen).toEqual([
      { agent: AGENT, userId: 'u1', sessionId: 'ses-a' },
      { agent: AGENT, userId: 'u2', sessionId: 'ses-b' },
    ]);
    expect(source.requests.map(({ tenant, cost, priority }) => ({ tenant, cost, priority }))).toEqual([
      { tenant: 'tenant-u1', cost: 7, priority: 'high' },
      { tenant: 'tenant-u2', cost: 7, priority: 'high' },
    ]);
  });

  it('a throwing resolver fails admission_failed {reason: invalid_admission_options}; nothing is acquired', async () => {
    const source = new RecordingSource();
    const agent = scriptedAgent([{ text: 'never' }]);
    const runner = makeRunner({
      agent,
      admission: {
        controller: source,
        tenant: () => {
          throw new Error('secret text');
        },
      },
    });
    const error = await runnerError(runner.run({ userId: USER, sessionId: 'ses-throw', message: 'hi' }));
    expectError(error, 'admission_failed', { reason: 'invalid_admission_options' });
    expect(error.message).not.toContain('secret');
    expect(source.requests).toEqual([]);
    expect(agent.model.calls).toHaveLength(0);
  });

  it('a resolver answering an invalid tenant is refused by the controller as invalid_admission_options', async () => {
    const source = new RecordingSource();
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller: source, tenant: () => '' } });
    expectError(await runnerError(runner.run({ userId: USER, sessionId: 'ses-bad', message: 'hi' })), 'admission_failed', { reason: 'invalid_admission_options' });
    expect(source.controller.status().active).toBe(0);
  });

  it.each([
    ['tenant', ''],
    ['tenant', 42],
    ['cost', -1],
    ['cost', 2 ** 31 + 1],
    ['cost', Number.NaN],
    ['priority', 'urgent'],
  ])('a fixed %s of %p is invalid_runner_admission_control {field}', (field, value) => {
    const controller = new AdmissionController();
    expect(() => makeRunner({ agent: scriptedAgent([]), admission: { controller, [field]: value } })).toThrow(
      expect.objectContaining({ code: 'invalid_runner_admission_control', details: { field } }),
    );
  });

  it('a rate_limited refusal becomes admission_failed carrying limit_scope and retry_after_ms', async () => {
    const refusing: PermitSource = {
      acquire: () => Promise.reject(new AdmissionError('rate_limited', { limit_scope: 'tenant', retry_after_ms: 2500 })),
      release: () => false,
    };
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller: refusing, tenant: 'acme' } });
    expectError(await runnerError(runner.run({ userId: USER, sessionId: 'ses-rate', message: 'hi' })), 'admission_failed', {
      reason: 'rate_limited',
      limit_scope: 'tenant',
      retry_after_ms: 2500,
    });
  });
});

describe('Runner model outcome reports (spec 09 §6): at most once per permit', () => {
  it('an invocation whose model calls all answer reports ok once, at its end, with the last call latency', async () => {
    const source = new RecordingSource();
    const { tool } = countingTool('lookup');
    const agent = scriptedAgent([{ toolCalls: [{ name: 'lookup', args: {} }] }, { text: 'done' }], { tools: [tool] });
    const runner = makeRunner({ agent, admission: { controller: source } });
    await runner.run({ userId: USER, sessionId: 'ses-ok', message: 'hi' });
    expect(agent.model.calls).toHaveLength(2);
    expect(source.reports).toEqual([{ outcome: 'ok', latencyMs: expect.any(Number) }]);
    expect(source.reports[0].latencyMs).toBeGreaterThanOrEqual(0);
  });

  it.each([429, 503])('a model answered %i reports overloaded', async (status) => {
    const source = new RecordingSource();
    const runner = makeRunner({ agent: scriptedAgent([overloaded(status)]), admission: { controller: source } });
    expectError(await runnerError(runner.run({ userId: USER, sessionId: `ses-${status}`, message: 'hi' })), 'model_failed');
    expect(source.reports).toEqual([{ outcome: 'overloaded', latencyMs: expect.any(Number) }]);
  });

  it('a model failing with another status (500) reports ok: only 429 and 503 mean overloaded', async () => {
    const source = new RecordingSource();
    const runner = makeRunner({ agent: scriptedAgent([overloaded(500)]), admission: { controller: source } });
    await runnerError(runner.run({ userId: USER, sessionId: 'ses-500', message: 'hi' }));
    expect(source.reports).toEqual([{ outcome: 'ok', latencyMs: expect.any(Number) }]);
  });

  it('an invocation refused before any model call reports nothing', async () => {
    const source = new RecordingSource();
    const runner = makeRunner({
      agent: scriptedAgent([{ text: 'never' }], { instruction: () => { throw new Error('no'); } }),
      admission: { controller: source },
    });
    await runnerError(runner.run({ userId: USER, sessionId: 'ses-none', message: 'hi' }));
    expect(source.reports).toEqual([]);
  });

  it('a permit without report (an application controller of its own) is left alone', async () => {
    const controller = new AdmissionController();
    const bare: PermitSource = {
      acquire: async (agentId, opts) => {
        const permit = await controller.acquire(agentId, opts);
        return { id: permit.id, agentId, requestRef: permit.requestRef, signal: permit.signal, [Symbol.dispose]: () => undefined, real: permit } as unknown as Permit;
      },
      release: (permit) => controller.release((permit as unknown as { real: Permit }).real),
    };
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'done' }]), admission: { controller: bare } });
    await expect(runner.run({ userId: USER, sessionId: 'ses-bare', message: 'hi' })).resolves.toBeDefined();
    expect(controller.status().active).toBe(0);
  });
});

describe('isOverloadedModelError', () => {
  it.each([
    [new RunnerError('model_failed', { reason: 'http_status', status: 429 }), true],
    [new RunnerError('model_failed', { reason: 'http_status', status: 503 }), true],
    [new RunnerError('model_failed', { reason: 'http_status', status: 500 }), false],
    [new RunnerError('model_failed', { reason: 'timeout' }), false],
    [new RunnerError('timeout', { timeout_ms: 1 }), false],
    [Object.assign(new Error('x'), { statusCode: 429 }), true],
    [Object.assign(new Error('x'), { statusCode: 400 }), false],
  ])('%p overloaded: %p', (error, expected) => {
    expect(isOverloadedModelError(error)).toBe(expected);
  });
});
