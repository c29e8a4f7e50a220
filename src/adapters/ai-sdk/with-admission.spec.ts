import { APICallError, generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { runtimeSafetyMiddleware, withAdmission } from './';
import { AdmissionController } from '../../admission/admission-controller';
import { AdmissionError } from '../../admission/admission.errors';
import type { AdmissionRequestOptions } from '../../admission/admission-request';
import type { PermitSource } from '../../admission/admission-service';
import type { Permit, WorkReport } from '../../admission/permit';
import { RuntimePolicy } from '../../policy/runtime-policy';
import { scriptedModel, streamParts, textTurn, toolTurn } from './testing/ai-sdk-fixtures';

const controllerOf = (overflow: 'reject' | 'queue' = 'reject') => new AdmissionController({ globalLimit: 1, overflow, defaultQueueTimeoutMs: 'infinity' });

/** A promise and the function that settles it, for holding a call open. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('withAdmission: one permit for the whole call (spec 01 §5.7)', () => {
  it('holds one permit across every model call of a generateText tool loop and releases it after', async () => {
    const controller = controllerOf();
    const activeAtCall: number[] = [];
    const turns = [toolTurn({ id: 'c1', name: 'search', input: {} }), textTurn('done')];
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        activeAtCall.push(controller.status().active);
        return turns[activeAtCall.length - 1];
      },
    });
    const tools = { search: tool({ inputSchema: jsonSchema({}), execute: async () => 'ok' }) };
    const result = await withAdmission(controller, 'support', (signal) => generateText({ model, tools, prompt: 'hi', stopWhen: stepCountIs(3), abortSignal: signal }));
    expect(result.text).toBe('done');
    expect(activeAtCall).toEqual([1, 1]);
    expect(controller.status()).toMatchObject({ active: 0, queue_length: 0 });
  });

  it('holds the permit until a streamText call has streamed to its end when fn awaits its text', async () => {
    const controller = controllerOf();
    const activeAtCall: number[] = [];
    const responses = [streamParts({ id: 'c1', name: 'search', input: {} }), streamParts('all ', 'done')];
    const model = new MockLanguageModelV4({
      doStream: async () => {
        activeAtCall.push(controller.status().active);
        return { stream: convertArrayToReadableStream(responses[activeAtCall.length - 1]) };
      },
    });
    const tools = { search: tool({ inputSchema: jsonSchema({}), execute: async () => 'ok' }) };
    const text = await withAdmission(controller, 'support', async (signal) => {
      const result = streamText({ model, tools, prompt: 'hi', stopWhen: stepCountIs(3), abortSignal: signal });
      return await result.text;
    });
    expect(text).toBe('all done');
    expect(activeAtCall).toEqual([1, 1]);
    expect(controller.status().active).toBe(0);
  });

  it('releases the permit when the call throws, a policy denial included', async () => {
    const controller = controllerOf();
    const policy = RuntimePolicy.compile({ agents: { allow: ['support'] } });
    const model = wrapLanguageModel({ model: scriptedModel(textTurn('hello')), middleware: runtimeSafetyMiddleware({ policy, agent: 'intruder' }) });
    await expect(withAdmission(controller, 'intruder', (signal) => generateText({ model, prompt: 'hi', abortSignal: signal }))).rejects.toMatchObject({ code: 'runtime_policy_denied' });
    expect(controller.status().active).toBe(0);
  });

  it('fails with concurrency_limit_reached at capacity in reject mode, without calling fn', async () => {
    const controller = controllerOf('reject');
    const held = await controller.acquire('support');
    const fn = jest.fn(async () => 'ran');
    const error = await withAdmission(controller, 'support', fn).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error).toMatchObject({ code: 'concurrency_limit_reached' });
    expect(fn).not.toHaveBeenCalled();
    controller.release(held);
    expect(controller.status().active).toBe(0);
  });

  it('waits in FIFO order in queue mode, each call starting once the one before released its permit', async () => {
    const controller = controllerOf('queue');
    const held = await controller.acquire('support');
    const order: string[] = [];
    const calls = ['a', 'b', 'c'].map((name) => {
      const hold = gate();
      const done = withAdmission(controller, 'support', async () => {
        order.push(`${name} start`);
        await hold.opened;
        order.push(`${name} end`);
      });
      return { hold, done };
    });
    await tick();
    expect(controller.status()).toMatchObject({ active: 1, queue_length: 3 });
    expect(order).toEqual([]);
    controller.release(held);
    for (const call of calls) {
      await tick();
      call.hold.open();
      await call.done;
    }
    expect(order).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
    expect(controller.status()).toMatchObject({ active: 0, queue_length: 0 });
  });

  it('leaves no queue entry when the caller aborts while queued, and never calls fn', async () => {
    const controller = controllerOf('queue');
    const held = await controller.acquire('support');
    const caller = new AbortController();
    const fn = jest.fn(async () => 'ran');
    const pending = withAdmission(controller, 'support', fn, { signal: caller.signal });
    await tick();
    expect(controller.status().queue_length).toBe(1);
    const reason = new Error('client went away');
    caller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(controller.status()).toMatchObject({ active: 1, queue_length: 0 });
    expect(fn).not.toHaveBeenCalled();
    controller.release(held);
    expect(controller.status()).toMatchObject({ active: 0, queue_length: 0 });
  });

  it('aborts the running call through the signal it hands to fn when the caller aborts, and releases the permit', async () => {
    const controller = controllerOf();
    const caller = new AbortController();
    const model = new MockLanguageModelV4({
      doGenerate: ({ abortSignal }) =>
        new Promise((_resolve, reject) => {
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
          caller.abort();
        }),
    });
    const outcome = await withAdmission(controller, 'support', (signal) => generateText({ model, prompt: 'hi', abortSignal: signal, maxRetries: 0 }), { signal: caller.signal }).catch((e: unknown) => e);
    expect(outcome).toMatchObject({ code: 'permit_revoked', details: { outcome: 'owner_down' } });
    expect(controller.status().active).toBe(0);
  });
});

describe('withAdmission: bad input is a typed rejection, never a throw', () => {
  const controller = controllerOf();

  it.each([
    ['a missing controller', () => withAdmission(undefined as never, 'support', async () => 1), 'controller'],
    ['a controller without release', () => withAdmission({ acquire: async () => ({}) } as never, 'support', async () => 1), 'controller'],
    ['a non-function fn', () => withAdmission(controller, 'support', 'generate' as never), 'fn'],
    ['an unknown option', () => withAdmission(controller, 'support', async () => 1, { queueTimeout: 5 } as never), 'queueTimeout'],
  ])('rejects %s with invalid_admission_options naming the field', async (_label, call, field) => {
    let promise: Promise<unknown> | undefined;
    expect(() => (promise = call())).not.toThrow();
    await expect(promise).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field } });
    expect(controller.status().active).toBe(0);
  });

  it("passes the controller's own validation through: a bad agent id or option value", async () => {
    await expect(withAdmission(controller, '', async () => 1)).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field: 'agentId' } });
    await expect(withAdmission(controller, 'support', async () => 1, { overflow: 'drop' } as never)).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field: 'overflow' } });
    expect(controller.status()).toMatchObject({ active: 0, queue_length: 0 });
  });
});

/** A real controller seen through a source that records each acquire's options and each report. */
function recordingSource() {
  const controller = new AdmissionController({ overflow: 'reject' });
  const requests: AdmissionRequestOptions[] = [];
  const reports: WorkReport[] = [];
  const issued = new Map<Permit, Permit>();
  const source: PermitSource = {
    acquire: async (agentId, opts) => {
      requests.push({ ...opts });
      const permit = await controller.acquire(agentId, opts);
      const seen = { ...permit, id: permit.id, signal: permit.signal, settle: (cost: number) => permit.settle(cost), report: (report: WorkReport) => (reports.push(report), permit.report(report)) } as Permit;
      issued.set(seen, permit);
      return seen;
    },
    release: (permit) => controller.release(issued.get(permit) ?? permit),
  };
  return { controller, source, requests, reports };
}

const failingModel = (statusCode: number) =>
  new MockLanguageModelV4({
    doGenerate: async () => {
      throw new APICallError({ message: 'provider answer', url: 'http://127.0.0.1/v1', requestBodyValues: {}, statusCode, isRetryable: false });
    },
  });

describe('withAdmission: flow options and outcome reports (spec 09 §1, §6)', () => {
  it('passes tenant, cost and priority to acquire and hands fn the permit', async () => {
    const { source, requests, controller } = recordingSource();
    let received: Permit | undefined;
    await withAdmission(source, 'support', (_signal, permit) => {
      received = permit;
      return 'ok';
    }, { tenant: 'acme', cost: 1200, priority: 'high' });
    expect(requests).toEqual([{ tenant: 'acme', cost: 1200, priority: 'high' }]);
    expect(received?.agentId).toBe('support');
    expect(controller.status().active).toBe(0);
  });

  it('refuses a bad flow value through the controller before fn runs', async () => {
    const fn = jest.fn();
    await expect(withAdmission(controllerOf(), 'support', fn, { tenant: '' })).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field: 'tenant' } });
    await expect(withAdmission(controllerOf(), 'support', fn, { priority: 'urgent' as never })).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field: 'priority' } });
    expect(fn).not.toHaveBeenCalled();
  });

  it('reports ok with the latency after a call that answered', async () => {
    const { source, reports } = recordingSource();
    const model = new MockLanguageModelV4({ doGenerate: async () => textTurn('done') });
    await withAdmission(source, 'support', (signal) => generateText({ model, prompt: 'hi', abortSignal: signal }));
    expect(reports).toEqual([{ outcome: 'ok', latencyMs: expect.any(Number) }]);
  });

  it.each([429, 503])('reports overloaded when the provider answered %i (APICallError.statusCode)', async (status) => {
    const { source, reports, controller } = recordingSource();
    await expect(withAdmission(source, 'support', (signal) => generateText({ model: failingModel(status), prompt: 'hi', maxRetries: 0, abortSignal: signal }))).rejects.toMatchObject({ statusCode: status });
    expect(reports).toEqual([{ outcome: 'overloaded', latencyMs: expect.any(Number) }]);
    expect(controller.status().active).toBe(0);
  });

  it('reports nothing for another failure (nothing says the provider is overloaded)', async () => {
    const { source, reports } = recordingSource();
    await expect(withAdmission(source, 'support', (signal) => generateText({ model: failingModel(400), prompt: 'hi', maxRetries: 0, abortSignal: signal }))).rejects.toBeDefined();
    expect(reports).toEqual([]);
  });

  it('a report fn made itself wins: the adapter\'s later report is refused by the permit and ignored', async () => {
    const { source, reports } = recordingSource();
    await withAdmission(source, 'support', (_signal, permit) => permit.report({ outcome: 'overloaded' }));
    expect(reports).toEqual([{ outcome: 'overloaded' }, { outcome: 'ok', latencyMs: expect.any(Number) }]);
  });
});
