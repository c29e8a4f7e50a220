import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { guardTools, isToolDenial } from './';
import { RuntimePolicy } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { RunnerError } from '../../runner/runner.errors';
import { CapturingSink, collect, deniedOutputOf, denialOf, scriptedModel, streamingModel, streamParts, textTurn, toolResultIn, toolTurn } from './testing/ai-sdk-fixtures';

const policy = RuntimePolicy.compile({
  id: 'ai-sdk-tools',
  agents: { allow: ['support'] },
  tools: { allow: ['search', 'refund'], deny: ['shell'] },
  maxContentBytes: 64,
});
const objectInput = jsonSchema<{ cmd?: string; q?: string }>({ type: 'object', properties: { cmd: { type: 'string' }, q: { type: 'string' } } });

function run(tools: Parameters<typeof guardTools>[0], model: ReturnType<typeof scriptedModel>, sink = new CapturingSink(), onDecision?: (d: PolicyDecision) => void) {
  return generateText({ model, tools: guardTools(tools, { policy, auditSink: sink, ...(onDecision ? { onDecision } : {}) }), prompt: 'help me', stopWhen: stepCountIs(4) });
}

describe('guardTools: a denied call (spec 03 §6.5, §6.11)', () => {
  it('never runs the tool: the step holds a tool-error carrying the denial, and the model sees it as error output', async () => {
    const execute = jest.fn(async () => ({ ran: true }));
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: 'rm -rf /' } }), textTurn('ok'));
    const result = await run({ shell: tool({ inputSchema: objectInput, execute }) }, model, sink);
    expect(execute).not.toHaveBeenCalled();
    expect(sink.decisions).toHaveLength(1);
    const [decision] = sink.decisions;
    expect(decision).toMatchObject({ operation: 'tool_call', subject: 'shell', outcome: 'deny', reason: 'explicitly_denied' });
    const parts = result.steps[0].content.filter((part) => part.type === 'tool-error' || part.type === 'tool-result');
    expect(parts.map((part) => part.type)).toEqual(['tool-error']);
    const failure = parts[0].type === 'tool-error' ? parts[0].error : undefined;
    expect(isToolDenial(failure)).toBe(true);
    expect(isToolDenial(failure) && failure.details).toEqual(denialOf(decision));
    expect(model.doGenerateCalls).toHaveLength(2);
    const seen = toolResultIn(model.doGenerateCalls[1].prompt, 'c1');
    expect(seen).toEqual(deniedOutputOf(decision));
    expect(JSON.stringify(seen)).not.toContain('rm -rf');
    expect(result.text).toBe('ok');
  });

  it('denies a tool the policy does not list (fail closed) and skips its own onInputAvailable', async () => {
    const execute = jest.fn(async () => 'ran');
    const onInputAvailable = jest.fn();
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'lookup', input: { q: 'x' } }), textTurn('ok'));
    await run({ lookup: tool({ inputSchema: objectInput, execute, onInputAvailable }) }, model, sink);
    expect(execute).not.toHaveBeenCalled();
    expect(onInputAvailable).not.toHaveBeenCalled();
    expect(sink.decisions.map((d) => d.reason)).toEqual(['not_allowed']);
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual(deniedOutputOf(sink.decisions[0]));
  });

  it('fails the generateText call with runtime_policy_audit_persistence_failed when the audit write fails', async () => {
    const execute = jest.fn(async () => 'ran');
    const sink = new CapturingSink();
    sink.failing = true;
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), textTurn('ok'));
    const failure = await run({ shell: tool({ inputSchema: objectInput, execute }) }, model, sink).catch((error: unknown) => error);
    expect(RunnerError.isRunnerError(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'runtime_policy_audit_persistence_failed', details: { target: 'audit_sink' } });
    expect((failure as Error).message).not.toContain('disk full');
    expect(execute).not.toHaveBeenCalled();
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('fails a streamText call with runtime_policy_audit_persistence_failed when the audit write fails', async () => {
    const execute = jest.fn(async () => 'ran');
    const sink = new CapturingSink();
    sink.failing = true;
    const model = streamingModel(streamParts({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), streamParts('done'));
    const result = streamText({ model, tools: guardTools({ shell: tool({ inputSchema: objectInput, execute }) }, { policy, auditSink: sink }), prompt: 'hi', stopWhen: stepCountIs(3), onError: () => {} });
    await expect(result.text).rejects.toMatchObject({ code: 'runtime_policy_audit_persistence_failed', details: { target: 'audit_sink' } });
    expect(execute).not.toHaveBeenCalled();
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('makes one decision per call although onInputAvailable, needsApproval and execute all see it', async () => {
    const decisions: PolicyDecision[] = [];
    const needsApproval = jest.fn(async () => true);
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), textTurn('ok'));
    const sink = new CapturingSink();
    await run({ shell: tool({ inputSchema: objectInput, execute: async () => 'ran', needsApproval, onInputAvailable: () => {} }) }, model, sink, (d) => decisions.push(d));
    expect(decisions.filter((d) => d.operation === 'tool_call')).toHaveLength(1);
    expect(sink.decisions).toHaveLength(1);
    expect(needsApproval).not.toHaveBeenCalled();
  });

  it("never hands a denial to the tool's own toModelOutput: the model gets the error output", async () => {
    const toModelOutput = jest.fn(({ output }: { output: unknown }) => ({ type: 'text' as const, value: `rendered ${JSON.stringify(output)}` }));
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), textTurn('ok'));
    await run({ shell: tool({ inputSchema: objectInput, execute: async () => 'ran', toModelOutput }) }, model, sink);
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual(deniedOutputOf(sink.decisions[0]));
    expect(toModelOutput).not.toHaveBeenCalled();
  });

  it('streams a denied call as a tool-error part, and a tool-output-error to the UI', async () => {
    const execute = jest.fn(async () => 'ran');
    const sink = new CapturingSink();
    const model = streamingModel(streamParts({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), streamParts('done'));
    const result = streamText({ model, tools: guardTools({ shell: tool({ inputSchema: objectInput, execute }) }, { policy, auditSink: sink }), prompt: 'hi', stopWhen: stepCountIs(3) });
    const [parts, chunks] = await Promise.all([collect(result.fullStream), collect(result.toUIMessageStream())]);
    expect(await result.text).toBe('done');
    expect(execute).not.toHaveBeenCalled();
    expect(sink.decisions).toHaveLength(1);
    const toolParts = parts.filter((part) => part.type === 'tool-error' || part.type === 'tool-result');
    expect(toolParts).toHaveLength(1);
    expect(toolParts[0]).toMatchObject({ type: 'tool-error', toolCallId: 'c1', toolName: 'shell' });
    expect(toolParts[0].type === 'tool-error' && isToolDenial(toolParts[0].error)).toBe(true);
    const uiOutputs = chunks.filter((chunk) => chunk.type === 'tool-output-error' || chunk.type === 'tool-output-available');
    expect(uiOutputs).toEqual([expect.objectContaining({ type: 'tool-output-error', toolCallId: 'c1', errorText: (deniedOutputOf(sink.decisions[0]) as { value: string }).value })]);
    expect(toolResultIn(model.doStreamCalls[1].prompt, 'c1')).toEqual(deniedOutputOf(sink.decisions[0]));
  });

  it('makes no decision for a tool name the set does not have: the SDK answers it itself (documented gap)', async () => {
    const decisions: PolicyDecision[] = [];
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'nosuch', input: {} }), textTurn('ok'));
    const result = await run({ search: tool({ inputSchema: objectInput, execute: async () => 'ran' }) }, model, new CapturingSink(), (d) => decisions.push(d));
    expect(decisions).toEqual([]);
    expect(result.steps[0].content.some((part) => part.type === 'tool-error')).toBe(true);
  });
});

describe('guardTools: an allowed call', () => {
  it('runs the tool and passes its result to the model; nothing is audited', async () => {
    const execute = jest.fn(async ({ q }: { q?: string }) => ({ hits: [q] }));
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: { q: 'parcel' } }), textTurn('found'));
    const result = await run({ search: tool({ inputSchema: objectInput, execute }) }, model, sink);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0][0]).toEqual({ q: 'parcel' });
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual({ type: 'json', value: { hits: ['parcel'] } });
    expect(sink.decisions).toEqual([]);
    expect(result.text).toBe('found');
  });

  it('ends a call whose result is over the tool-result budget as a tool error carrying the denial (spec 03 §6.8)', async () => {
    const execute = jest.fn(async () => ({ text: 'x'.repeat(100) }));
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: { q: 'big' } }), textTurn('ok'));
    const result = await run({ search: tool({ inputSchema: objectInput, execute }) }, model, sink);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(sink.decisions).toHaveLength(1);
    const failure = result.steps[0].content.find((part) => part.type === 'tool-error');
    expect(isToolDenial(failure?.error) && failure.error.details).toEqual(denialOf(sink.decisions[0]));
    expect(sink.decisions[0]).toMatchObject({ operation: 'content', subject: 'tool_result', reason: 'content_budget_exceeded', budget: { kind: 'content', limit_bytes: 64 } });
    expect(sink.decisions[0].budget.measured_bytes).toBeGreaterThan(64);
    const seen = toolResultIn(model.doGenerateCalls[1].prompt, 'c1');
    expect(seen).toEqual(deniedOutputOf(sink.decisions[0]));
    expect(JSON.stringify(seen)).not.toContain('xxxx');
  });

  it('answers with a tool error, never the result, when a result denial cannot be audited (documented limit)', async () => {
    const sink = new CapturingSink();
    sink.failing = true;
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: {} }), textTurn('ok'));
    const result = await run({ search: tool({ inputSchema: objectInput, execute: async () => 'r'.repeat(100) }) }, model, sink);
    const failure = result.steps[0].content.find((part) => part.type === 'tool-error');
    expect(failure).toMatchObject({ toolCallId: 'c1', error: { code: 'runtime_policy_audit_persistence_failed', details: { target: 'audit_sink' } } });
    const seen = toolResultIn(model.doGenerateCalls[1].prompt, 'c1');
    expect(seen).toMatchObject({ type: 'error-text' });
    expect(JSON.stringify(seen)).toContain('runtime_policy_audit_persistence_failed');
    expect(JSON.stringify(seen)).not.toContain('rrrr');
  });

  it('measures a string result as its UTF-8 bytes, the limit inclusive', async () => {
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: {} }, { id: 'c2', name: 'search', input: { q: 'more' } }), textTurn('ok'));
    const execute = async ({ q }: { q?: string }) => (q === undefined ? 'é'.repeat(32) : 'é'.repeat(32) + 'e');
    await run({ search: tool({ inputSchema: objectInput, execute }) }, model, sink);
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual({ type: 'text', value: 'é'.repeat(32) });
    expect(sink.decisions.map((d) => [d.reason, d.budget.measured_bytes])).toEqual([['content_budget_exceeded', 65]]);
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c2')).toEqual(deniedOutputOf(sink.decisions[0]));
  });

  it('ends a call whose result is not JSON (a Date) as a tool error carrying the denial', async () => {
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: {} }), textTurn('ok'));
    await run({ search: tool({ inputSchema: objectInput, execute: async () => ({ at: new Date(0) }) }) }, model, sink);
    expect(sink.decisions.map((d) => d.reason)).toEqual(['invalid_content']);
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual(deniedOutputOf(sink.decisions[0]));
  });

  it('checks a streaming tool chunk by chunk and closes it at the first chunk over the budget', async () => {
    const produced: string[] = [];
    let closed = false;
    async function* chunks(): AsyncGenerator<string> {
      try {
        for (const chunk of ['small', 'y'.repeat(100), 'never']) {
          produced.push(chunk);
          yield chunk;
        }
      } finally {
        closed = true;
      }
    }
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'search', input: {} }), textTurn('ok'));
    await run({ search: tool({ inputSchema: objectInput, execute: chunks }) }, model, sink);
    expect(produced).toEqual(['small', 'y'.repeat(100)]);
    expect(closed).toBe(true);
    expect(sink.decisions.map((d) => d.reason)).toEqual(['content_budget_exceeded']);
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual(deniedOutputOf(sink.decisions[0]));
  });
});

describe('guardTools: approval (spec 03 §6.7)', () => {
  const approvalRequests = (result: Awaited<ReturnType<typeof generateText>>) => result.steps.flatMap((step) => step.content).filter((part) => part.type === 'tool-approval-request');

  it('never turns a denied call of a needsApproval tool into an approval request', async () => {
    const execute = jest.fn(async () => 'ran');
    const sink = new CapturingSink();
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), textTurn('ok'));
    const result = await run({ shell: tool({ inputSchema: objectInput, execute, needsApproval: true }) }, model, sink);
    expect(approvalRequests(result)).toEqual([]);
    expect(execute).not.toHaveBeenCalled();
    expect(toolResultIn(model.doGenerateCalls[1].prompt, 'c1')).toEqual(deniedOutputOf(sink.decisions[0]));
  });

  it('never asks a needsApproval function about a denied call', async () => {
    const needsApproval = jest.fn(async () => true);
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'shell', input: { cmd: 'ls' } }), textTurn('ok'));
    const result = await run({ shell: tool({ inputSchema: objectInput, execute: async () => 'ran', needsApproval }) }, model);
    expect(needsApproval).not.toHaveBeenCalled();
    expect(approvalRequests(result)).toEqual([]);
  });

  it('still asks for approval of an allowed call that needs it, without running the tool', async () => {
    const execute = jest.fn(async () => 'refunded');
    const needsApproval = jest.fn(async () => true);
    const model = scriptedModel(toolTurn({ id: 'c1', name: 'refund', input: { q: 'order-1' } }), textTurn('ok'));
    const result = await run({ refund: tool({ inputSchema: objectInput, execute, needsApproval }) }, model);
    expect(needsApproval).toHaveBeenCalledTimes(1);
    expect(approvalRequests(result)).toHaveLength(1);
    expect(execute).not.toHaveBeenCalled();
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});
