import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import type { MockLanguageModelV4 } from 'ai/test';
import { guardTools, runtimeSafetyMiddleware } from './';
import type { ModelGenerateResult } from './ai-sdk.types';
import { RuntimePolicy } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { RunnerError } from '../../runner/runner.errors';
import { CapturingSink, scriptedModel, streamingModel, streamParts, textTurn, toolTurn } from './testing/ai-sdk-fixtures';

const policy = RuntimePolicy.compile({ id: 'ai-sdk-mw', agents: { allow: ['support'] }, tools: { allow: ['search'] }, maxContentBytes: 32 });

function guarded(model: MockLanguageModelV4, agent = 'support', sink = new CapturingSink(), decisions: PolicyDecision[] = []) {
  return wrapLanguageModel({ model, middleware: runtimeSafetyMiddleware({ policy, agent, auditSink: sink, onDecision: (d) => decisions.push(d) }) });
}

/** The five-key summary a `runtime_policy_denied` error carries (spec 03 §6.11). */
const summaryOf = ({ decision_id, policy_id, operation, outcome, reason }: PolicyDecision) => ({ decision_id, policy_id, operation, outcome, reason });

function expectDenied(error: unknown, decision: PolicyDecision): void {
  expect(RunnerError.isRunnerError(error)).toBe(true);
  expect(error).toMatchObject({ code: 'runtime_policy_denied', details: summaryOf(decision) });
}

/** Reads a `streamText` result to its end: the text deltas, the part types, and the error it ended with. */
async function drain(result: ReturnType<typeof streamText>): Promise<{ deltas: string[]; types: string[]; error: unknown }> {
  const deltas: string[] = [];
  const types: string[] = [];
  try {
    for await (const part of result.fullStream) {
      types.push(part.type);
      if (part.type === 'text-delta') deltas.push(part.text);
    }
  } catch (error) {
    return { deltas, types, error };
  }
  return { deltas, types, error: undefined };
}

describe('runtimeSafetyMiddleware with generateText', () => {
  it('denies an agent the policy does not allow before the model is called', async () => {
    const model = scriptedModel(textTurn('hello'));
    const sink = new CapturingSink();
    const error = await generateText({ model: guarded(model, 'intruder', sink), prompt: 'hi' }).catch((e: unknown) => e);
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(sink.decisions).toHaveLength(1);
    expect(sink.decisions[0]).toMatchObject({ operation: 'agent_invocation', subject: 'intruder', reason: 'not_allowed' });
    expectDenied(error, sink.decisions[0]);
  });

  it('denies user input over maxContentBytes before the model is called; the system prompt is not user input', async () => {
    const model = scriptedModel(textTurn('hello'), textTurn('hello'));
    const sink = new CapturingSink();
    const error = await generateText({ model: guarded(model, 'support', sink), prompt: 'x'.repeat(33) }).catch((e: unknown) => e);
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(sink.decisions[0]).toMatchObject({ operation: 'agent_invocation', reason: 'content_budget_exceeded', budget: { measured_bytes: 33, limit_bytes: 32 } });
    expectDenied(error, sink.decisions[0]);
    const allowed = await generateText({ model: guarded(model, 'support', sink), system: 's'.repeat(100), prompt: 'x'.repeat(32) });
    expect(allowed.text).toBe('hello');
  });

  it('denies an output over the budget after the call and returns none of it', async () => {
    const model = scriptedModel(textTurn('y'.repeat(33)));
    const sink = new CapturingSink();
    const error = await generateText({ model: guarded(model, 'support', sink), prompt: 'hi' }).catch((e: unknown) => e);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(sink.decisions).toHaveLength(1);
    expect(sink.decisions[0]).toMatchObject({ operation: 'content', subject: 'model_output', reason: 'content_budget_exceeded', budget: { measured_bytes: 33 } });
    expectDenied(error, sink.decisions[0]);
    expect(JSON.stringify(error) + String(error)).not.toContain('yyyy');
  });

  it('passes an allowed call with one agent and one output decision, and audits nothing', async () => {
    const decisions: PolicyDecision[] = [];
    const sink = new CapturingSink();
    const result = await generateText({ model: guarded(scriptedModel(textTurn('é'.repeat(16))), 'support', sink, decisions), prompt: 'hi' });
    expect(result.text).toBe('é'.repeat(16));
    expect(decisions.map((d) => [d.operation, d.outcome, d.budget.measured_bytes])).toEqual([
      ['agent_invocation', 'allow', 2],
      ['content', 'allow', 32],
    ]);
    expect(sink.decisions).toEqual([]);
  });

  it('checks every model call of a tool loop: a later step over the budget fails the call', async () => {
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: {} }), textTurn('z'.repeat(40)));
    const sink = new CapturingSink();
    const tools = guardTools({ search: tool({ inputSchema: jsonSchema({}), execute: async () => 'ok' }) }, { policy, auditSink: sink });
    const error = await generateText({ model: guarded(model, 'support', sink), tools, prompt: 'hi', stopWhen: stepCountIs(3) }).catch((e: unknown) => e);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(sink.decisions.map((d) => d.subject)).toEqual(['model_output']);
    expectDenied(error, sink.decisions[0]);
  });

  it('fails with runtime_policy_audit_persistence_failed when the denial cannot be audited, the model uncalled', async () => {
    const model = scriptedModel(textTurn('hello'));
    const sink = new CapturingSink();
    sink.failing = true;
    const error = await generateText({ model: guarded(model, 'intruder', sink), prompt: 'hi' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'runtime_policy_audit_persistence_failed', details: { target: 'audit_sink' } });
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('denies a prompt it cannot read as invalid_content rather than crashing', async () => {
    const middleware = runtimeSafetyMiddleware({ policy, agent: 'support' });
    const doGenerate = jest.fn(async () => textTurn('never'));
    const params = { prompt: 'not a prompt' } as never;
    const error = await Promise.resolve(middleware.wrapGenerate!({ doGenerate, doStream: jest.fn(), params, model: {} as never })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'runtime_policy_denied', details: { operation: 'agent_invocation', reason: 'invalid_content' } });
    expect(doGenerate).not.toHaveBeenCalled();
    const unreadable = { ...textTurn('x'), content: 'text' } as unknown as ModelGenerateResult;
    const output = await Promise.resolve(middleware.wrapGenerate!({ doGenerate: async () => unreadable, doStream: jest.fn(), params: { prompt: [] } as never, model: {} as never })).catch((e: unknown) => e);
    expect(output).toMatchObject({ code: 'runtime_policy_denied', details: { operation: 'content', reason: 'invalid_content' } });
  });
});

describe('runtimeSafetyMiddleware with streamText', () => {
  it('denies an agent the policy does not allow before the model is called, failing every reader', async () => {
    const model = streamingModel(streamParts('hello'));
    const sink = new CapturingSink();
    const { deltas, error } = await drain(streamText({ model: guarded(model, 'intruder', sink), prompt: 'hi', onError: () => {} }));
    expect(model.doStreamCalls).toHaveLength(0);
    expect(deltas).toEqual([]);
    expectDenied(error, sink.decisions[0]);
    const again = streamText({ model: guarded(streamingModel(streamParts('hello')), 'intruder'), prompt: 'hi', onError: () => {} });
    await expect(again.text).rejects.toMatchObject({ code: 'runtime_policy_denied' });
  });

  it('cuts a streamed output at the delta that crosses the budget: what was emitted stays within it, then the stream errors', async () => {
    const model = streamingModel(streamParts('hello ', 'world ', 'x'.repeat(30), 'never'));
    const sink = new CapturingSink();
    const { deltas, types, error } = await drain(streamText({ model: guarded(model, 'support', sink), prompt: 'hi', onError: () => {} }));
    expect(deltas).toEqual(['hello ', 'world ']);
    expect(Buffer.byteLength(deltas.join(''))).toBeLessThanOrEqual(32);
    expect(types).not.toContain('finish');
    expect(sink.decisions).toHaveLength(1);
    expect(sink.decisions[0]).toMatchObject({ operation: 'content', subject: 'model_output', reason: 'content_budget_exceeded' });
    expect(sink.decisions[0].budget.measured_bytes).toBeGreaterThan(32);
    expectDenied(error, sink.decisions[0]);
  });

  it('passes a streamed output within the budget whole, with exactly one output decision', async () => {
    const decisions: PolicyDecision[] = [];
    const result = streamText({ model: guarded(streamingModel(streamParts('hello ', 'world')), 'support', new CapturingSink(), decisions), prompt: 'hi' });
    expect(await result.text).toBe('hello world');
    expect(decisions.map((d) => [d.operation, d.outcome, d.budget.measured_bytes])).toEqual([
      ['agent_invocation', 'allow', 2],
      ['content', 'allow', 11],
    ]);
  });

  it('counts a surrogate pair split across two deltas as its 4 UTF-8 bytes', async () => {
    const decisions: PolicyDecision[] = [];
    const result = streamText({ model: guarded(streamingModel(streamParts('a'.repeat(28), '\ud83d', '\ude00')), 'support', new CapturingSink(), decisions), prompt: 'hi' });
    expect(await result.text).toBe('a'.repeat(28) + '😀');
    expect(decisions.map((d) => [d.operation, d.outcome, d.budget.measured_bytes])).toEqual([
      ['agent_invocation', 'allow', 2],
      ['content', 'allow', 32],
    ]);
  });

  it('fails the stream with runtime_policy_audit_persistence_failed when an output denial cannot be audited', async () => {
    const sink = new CapturingSink();
    sink.failing = true;
    const { error } = await drain(streamText({ model: guarded(streamingModel(streamParts('x'.repeat(40))), 'support', sink), prompt: 'hi', onError: () => {} }));
    expect(error).toMatchObject({ code: 'runtime_policy_audit_persistence_failed', details: { target: 'audit_sink' } });
  });
});

describe('runtimeSafetyMiddleware options', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 42],
    ['over 256 UTF-8 bytes', 'a'.repeat(257)],
  ])('refuses an agent id that is %s with invalid_runner_options {field: agent}', (_label, agent) => {
    expect(() => runtimeSafetyMiddleware({ policy, agent } as never)).toThrow(expect.objectContaining({ code: 'invalid_runner_options', details: { field: 'agent' } }));
  });

  it('refuses a missing policy and unknown keys', () => {
    expect(() => runtimeSafetyMiddleware({ agent: 'support' } as never)).toThrow(expect.objectContaining({ code: 'invalid_runner_runtime_policy' }));
    expect(() => runtimeSafetyMiddleware({ policy, agent: 'support', model: 'x' } as never)).toThrow(expect.objectContaining({ code: 'invalid_runner_options', details: { field: 'model' } }));
  });
});
