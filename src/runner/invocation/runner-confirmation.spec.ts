import { AdmissionController } from '../../admission/admission-controller';
import type { Agent, ToolContext } from '../agent.types';
import type { JsonObject } from '../content.types';
import { Runner } from '../runner';
import type { RunnerOptions } from '../runner.types';
import {
  AGENT,
  APP,
  CountingSessionService,
  countingTool,
  decisionOf,
  drain,
  expectedDenialRecord,
  expectError,
  makeRunner,
  Observers,
  ofKind,
  runnerError,
  scriptedAgent,
  storedEvents,
  toolResponses,
  USER,
} from '../testing/runner-harness';

const allowAll = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const } };

/** An agent whose first turn calls `transfer` (needs confirmation) once per id in `callIds`. */
function transferAgent(callIds: readonly string[] = ['c1']) {
  const contexts: ToolContext[] = [];
  const transfer = countingTool(
    'transfer',
    (args, ctx) => {
      contexts.push(ctx);
      return { sent: args.amount as number };
    },
    { requireConfirmation: true, confirmationHint: 'Send money?' },
  );
  const agent = scriptedAgent([{ toolCalls: callIds.map((id, index) => ({ id, name: 'transfer', args: { amount: index + 1 } })) }, { text: 'all done' }, { text: 'again' }], {
    tools: [transfer.tool],
  });
  return { agent, transfer, contexts };
}

async function pausedRun(runner: Runner, sessionId: string) {
  const result = await runner.run({ userId: USER, sessionId, message: 'pay' });
  expect(result.status).toBe('paused');
  return result;
}

describe('Pausing for confirmation (spec 03 §7, §6.7)', () => {
  it('an allowed call needing confirmation pauses: confirmation_requested event, paused result, permit released', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const { agent, transfer } = transferAgent();
    const runner = makeRunner({ agent, admission: { controller }, runtimePolicy: allowAll });

    const { result, streamed } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-pause', message: 'pay' }));

    expect(result).toEqual({ status: 'paused', invocation_id: result?.invocation_id, session_id: 'ses-pause', pending_call_ids: ['c1'] });
    expect(transfer.executions).toEqual([]);
    expect(controller.status().active).toBe(0);
    const events = await storedEvents(runner, 'ses-pause');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'confirmation_requested']);
    expect(events[2]).toMatchObject({ author: 'runner', content: { call_id: 'c1', tool: 'transfer', args: { amount: 1 }, hint: 'Send money?' } });
    expect(streamed).toEqual(events);
  });

  it('the continuation is hidden from contexts', async () => {
    const { agent } = transferAgent();
    const states: JsonObject[] = [];
    const runner = makeRunner({ agent, plugins: [{ name: 'state', beforeToolCallback: ({ ctx }) => void states.push(ctx.state) }] });
    const paused = await pausedRun(runner, 'ses-hidden');

    await runner.resume({ userId: USER, sessionId: 'ses-hidden', invocationId: paused.invocation_id, callId: 'c1', confirmed: true });

    expect(states).toEqual([{}]);
  });
});

describe('Resuming (spec 03 §7)', () => {
  it('confirmed: true runs the tool after a fresh policy check, with ctx.confirmation, and the model loop continues', async () => {
    const observers = new Observers();
    const { agent, transfer, contexts } = transferAgent();
    const runner = makeRunner({ agent, runtimePolicy: observers.policy(allowAll) });
    const paused = await pausedRun(runner, 'ses-yes');
    const checksBefore = observers.policyDecisions().filter((decision) => decision.operation === 'tool_call').length;

    const admitted: string[] = [];
    const result = await runner.resume({
      userId: USER,
      sessionId: 'ses-yes',
      invocationId: paused.invocation_id,
      callId: 'c1',
      confirmed: true,
      payload: { note: 'approved' },
      onAdmitted: ({ invocation_id }) => void admitted.push(invocation_id),
    });

    expect(result).toMatchObject({ status: 'completed', invocation_id: paused.invocation_id, output: { role: 'model', parts: [{ text: 'all done' }] } });
    expect(admitted).toEqual([paused.invocation_id]);
    expect(transfer.executions).toEqual([{ amount: 1 }]);
    expect(contexts[0].confirmation).toEqual({ confirmed: true, payload: { note: 'approved' } });
    expect(contexts[0].idempotencyKey).toBe(`${paused.invocation_id}:c1`);
    expect(observers.policyDecisions().filter((decision) => decision.operation === 'tool_call')).toHaveLength(checksBefore + 1);
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: true, result: { sent: 1 } });
    const events = await storedEvents(runner, 'ses-yes');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'confirmation_requested', 'tool_response', 'final_output']);
    expect(events.every((event) => event.invocation_id === paused.invocation_id)).toBe(true);
  });

  it('a policy installed after the pause denies the resumed call: denial record, model called again', async () => {
    const sessionService = new CountingSessionService();
    const { agent, transfer } = transferAgent();
    const lenient = makeRunner({ agent, sessionService, runtimePolicy: allowAll });
    const paused = await pausedRun(lenient, 'ses-stricter');
    const strict = makeRunner({ agent, sessionService, runtimePolicy: { agents: { allow: 'all' }, tools: { deny: ['transfer'] } } });

    const result = await strict.resume({ userId: USER, sessionId: 'ses-stricter', invocationId: paused.invocation_id, callId: 'c1', confirmed: true });

    expect(result.status).toBe('completed');
    expect(transfer.executions).toEqual([]);
    const events = await storedEvents(strict, 'ses-stricter');
    expect(events.map((event) => event.kind)).toEqual(['user_message', 'model_turn', 'confirmation_requested', 'policy_audit', 'tool_response', 'final_output']);
    const decision = decisionOf(events[3]);
    expect(decision).toMatchObject({ subject: 'transfer', reason: 'explicitly_denied' });
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decision));
  });

  it('a resume while admission is full fails admission_failed and restores the continuation for a later resume', async () => {
    const controller = new AdmissionController({ globalLimit: 1, overflow: 'reject' });
    const { agent, transfer } = transferAgent();
    const runner = makeRunner({ agent, admission: { controller } });
    const paused = await pausedRun(runner, 'ses-full');
    const held = await controller.acquire(AGENT);
    const request = { userId: USER, sessionId: 'ses-full', invocationId: paused.invocation_id, callId: 'c1', confirmed: true };

    expectError(await runnerError(runner.resume(request)), 'admission_failed', { reason: 'concurrency_limit_reached', limit_scope: 'global' });
    expect(transfer.executions).toEqual([]);
    controller.release(held);
    const result = await runner.resume(request);

    expect(result.status).toBe('completed');
    expect(transfer.executions).toEqual([{ amount: 1 }]);
    expect(controller.status().active).toBe(0);
  });

  it('confirmed: false records confirmation_rejected without running the tool and calls the model again', async () => {
    const { agent, transfer } = transferAgent();
    const runner = makeRunner({ agent, runtimePolicy: allowAll });
    const paused = await pausedRun(runner, 'ses-no');

    const result = await runner.resume({ userId: USER, sessionId: 'ses-no', invocationId: paused.invocation_id, callId: 'c1', confirmed: false });

    expect(result.status).toBe('completed');
    expect(transfer.executions).toEqual([]);
    expect(agent.model.calls).toHaveLength(2);
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: false, error: { kind: 'confirmation_rejected' } });
    const [response] = ofKind(await storedEvents(runner, 'ses-no'), 'tool_response');
    expect(response.content).toEqual({ call_id: 'c1', tool: 'transfer', response: { success: false, error: { kind: 'confirmation_rejected' } } });
  });

  it('a bad confirmed or an oversize payload is resume_input_required {field} before anything is read', async () => {
    const sessionService = new CountingSessionService();
    const { agent } = transferAgent();
    const runner = makeRunner({ agent, sessionService, runtimePolicy: { ...allowAll, maxContentBytes: 64 } });
    const paused = await pausedRun(runner, 'ses-bad');
    sessionService.calls = [];
    const base = { userId: USER, sessionId: 'ses-bad', invocationId: paused.invocation_id, callId: 'c1' };

    expectError(await runnerError(runner.resume({ ...base, confirmed: 'yes' as never })), 'resume_input_required', { field: 'confirmed' });
    expectError(await runnerError(runner.resume({ ...base } as never)), 'resume_input_required', { field: 'confirmed' });
    expectError(await runnerError(runner.resume({ ...base, confirmed: true, payload: { text: 'x'.repeat(100) } })), 'resume_input_required', { field: 'payload' });
    expectError(await runnerError(runner.resume({ ...base, confirmed: true, payload: (() => 1) as never })), 'resume_input_required', { field: 'payload' });
    for (const payload of ['a\u0000b', { ['k\u0000']: 1 }, ['\udc00']]) expectError(await runnerError(runner.resume({ ...base, confirmed: true, payload })), 'resume_input_required', { field: 'payload' });
    expect(() => runner.checkResumeInput({ confirmed: 1 })).toThrow(expect.objectContaining({ code: 'resume_input_required', details: { field: 'confirmed' } }));
    expect(sessionService.calls).toEqual([]);

    expect((await runner.resume({ ...base, confirmed: true, payload: { ok: 1 } })).status).toBe('completed');
  });

  it('without a policy the payload limit is 64 KiB', async () => {
    const { agent } = transferAgent();
    const runner = makeRunner({ agent });
    const paused = await pausedRun(runner, 'ses-64k');
    const base = { userId: USER, sessionId: 'ses-64k', invocationId: paused.invocation_id, callId: 'c1', confirmed: true };

    expectError(await runnerError(runner.resume({ ...base, payload: 'x'.repeat(64 * 1024) })), 'resume_input_required', { field: 'payload' });
    expect((await runner.resume({ ...base, payload: 'x'.repeat(64 * 1024 - 2) })).status).toBe('completed');
  });

  it('a second resume of the same call is invocation_not_found', async () => {
    const { agent, transfer } = transferAgent();
    const runner = makeRunner({ agent });
    const paused = await pausedRun(runner, 'ses-twice');
    const request = { userId: USER, sessionId: 'ses-twice', invocationId: paused.invocation_id, callId: 'c1', confirmed: true };

    await runner.resume(request);

    expectError(await runnerError(runner.resume(request)), 'invocation_not_found', {});
    expectError(await runnerError(runner.resume({ ...request, callId: 'c-unknown' })), 'invocation_not_found', {});
    expect(transfer.executions).toHaveLength(1);
  });

  it('of two concurrent resumes of one call, exactly one runs the tool and the other is invocation_not_found', async () => {
    const { agent, transfer } = transferAgent();
    const runner = makeRunner({ agent });
    const paused = await pausedRun(runner, 'ses-race');
    const request = { userId: USER, sessionId: 'ses-race', invocationId: paused.invocation_id, callId: 'c1', confirmed: true };

    const outcomes = await Promise.all([drain(runner.resumeAsync(request)), drain(runner.resumeAsync(request))]);

    expect(outcomes.map((outcome) => outcome.result?.status ?? (outcome.error as { code: string }).code).sort()).toEqual(['completed', 'invocation_not_found']);
    expect(transfer.executions).toHaveLength(1);
  });

  it('two pending calls in one turn: the first resume stays paused on the second, the second resume continues the loop', async () => {
    const { agent, transfer } = transferAgent(['c1', 'c2']);
    const runner = makeRunner({ agent });
    const paused = await pausedRun(runner, 'ses-two');
    expect(paused.pending_call_ids).toEqual(['c1', 'c2']);
    expect(ofKind(await storedEvents(runner, 'ses-two'), 'confirmation_requested')).toHaveLength(2);
    const base = { userId: USER, sessionId: 'ses-two', invocationId: paused.invocation_id };

    const first = await runner.resume({ ...base, callId: 'c1', confirmed: true });

    expect(first).toEqual({ status: 'paused', invocation_id: paused.invocation_id, session_id: 'ses-two', pending_call_ids: ['c2'] });
    expect(agent.model.calls).toHaveLength(1);
    expect(transfer.executions).toEqual([{ amount: 1 }]);

    const second = await runner.resume({ ...base, callId: 'c2', confirmed: true });

    expect(second.status).toBe('completed');
    expect(transfer.executions).toEqual([{ amount: 1 }, { amount: 2 }]);
    expect(agent.model.calls).toHaveLength(2);
    const responses = toolResponses(agent.model.calls[1]);
    expect([...responses.keys()]).toEqual(['c1', 'c2']);
    expect(responses.get('c2')).toEqual({ success: true, result: { sent: 2 } });
  });

  it('two concurrent resumes of different pending calls of one turn run one after the other: each tool once, one model call, no confirmation asked again', async () => {
    const { agent, transfer } = transferAgent(['c1', 'c2']);
    const runner = makeRunner({ agent });
    const paused = await pausedRun(runner, 'ses-two-at-once');
    const base = { userId: USER, sessionId: 'ses-two-at-once', invocationId: paused.invocation_id };

    const [first, second] = await Promise.all([runner.resume({ ...base, callId: 'c1', confirmed: true }), runner.resume({ ...base, callId: 'c2', confirmed: true })]);

    expect(first).toMatchObject({ status: 'paused', pending_call_ids: ['c2'] });
    expect(second.status).toBe('completed');
    expect(transfer.executions).toEqual([{ amount: 1 }, { amount: 2 }]);
    expect(agent.model.calls).toHaveLength(2);
    expect(ofKind(await storedEvents(runner, 'ses-two-at-once'), 'confirmation_requested')).toHaveLength(2);
    const session = await runner.sessionService.getSession({ appName: runner.appName, ...base });
    expect(Object.keys(session?.state ?? {})).toEqual([]);
  });

  it('a turn mixing a confirmation call with a plain call completes the plain call before pausing', async () => {
    const echo = countingTool('echo', () => 'echoed');
    const transfer = countingTool('transfer', () => 'sent', { requireConfirmation: true });
    const agent: Agent = scriptedAgent(
      [{ toolCalls: [{ id: 'c1', name: 'transfer', args: {} }, { id: 'c2', name: 'echo', args: {} }] }, { text: 'done' }],
      { tools: [echo.tool, transfer.tool] },
    );
    const runner = new Runner({ appName: APP, agent, sessionService: new CountingSessionService() } as RunnerOptions);

    const paused = await runner.run({ userId: USER, sessionId: 'ses-mixed', message: 'go' });

    expect(paused.pending_call_ids).toEqual(['c1']);
    expect(echo.executions).toHaveLength(1);
    const kinds = (await storedEvents(runner, 'ses-mixed')).map((event) => event.kind);
    expect(kinds).toEqual(['user_message', 'model_turn', 'tool_response', 'confirmation_requested']);
  });

  it('discardContinuations drops the pending calls of a cancelled paused run', async () => {
    const { agent } = transferAgent(['c1', 'c2']);
    const runner = makeRunner({ agent });
    const paused = await pausedRun(runner, 'ses-discard');
    const ref = { userId: USER, sessionId: 'ses-discard', invocationId: paused.invocation_id };

    expect(await runner.discardContinuations(ref)).toEqual(['c1', 'c2']);

    expectError(await runnerError(runner.resume({ ...ref, callId: 'c1', confirmed: true })), 'invocation_not_found', {});
  });
});
