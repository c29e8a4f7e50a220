import { AdmissionController } from '../../admission/admission-controller';
import {
  AGENT,
  countingTool,
  decisionOf,
  expectedDenialRecord,
  makeRunner,
  ofKind,
  scriptedAgent,
  storedEvents,
  toolResponses,
  sleep,
  USER,
} from '../testing/runner-harness';

const SUB = 'researcher';

describe('Sub-agents (spec 03 §6.12)', () => {
  it('a sub-agent call runs its own loop and answers {success: true, result: {output}}', async () => {
    const sub = scriptedAgent([{ text: 'found it' }], { description: 'Looks things up' }, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 'look up Oslo' } }] }, { text: 'root done' }], { subAgents: [sub] });
    const controller = new AdmissionController({ globalLimit: 1 });
    const runner = makeRunner({ agent: root, admission: { controller }, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: [SUB] } } });

    const result = await runner.run({ userId: USER, sessionId: 'ses-sub', message: 'go' });

    expect(result.status).toBe('completed');
    expect(root.model.calls[0].tools).toEqual([expect.objectContaining({ name: SUB, description: 'Looks things up' })]);
    expect(sub.model.calls).toHaveLength(1);
    expect(sub.model.calls[0].contents).toEqual([{ role: 'user', content: { role: 'user', parts: [{ text: 'look up Oslo' }] } }]);
    expect(toolResponses(root.model.calls[1]).get('c1')).toEqual({ success: true, result: { output: 'found it' } });
    expect(controller.status().active).toBe(0);
  });

  it('the sub-agent check runs on its input before any of its model work: a denial is the tool response', async () => {
    const sub = scriptedAgent([{ text: 'never' }], {}, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 'look up Oslo' } }] }, { text: 'root done' }], { subAgents: [sub] });
    const runner = makeRunner({ agent: root, runtimePolicy: { agents: { allow: [AGENT] }, tools: { allow: [SUB] } } });

    const result = await runner.run({ userId: USER, sessionId: 'ses-subdeny', message: 'go' });

    expect(result.status).toBe('completed');
    expect(sub.model.calls).toHaveLength(0);
    const [audit] = ofKind(await storedEvents(runner, 'ses-subdeny'), 'policy_audit');
    expect(decisionOf(audit)).toMatchObject({ operation: 'agent_invocation', subject: SUB, reason: 'not_allowed' });
    expect(toolResponses(root.model.calls[1]).get('c1')).toEqual(expectedDenialRecord(decisionOf(audit)));
  });

  it('the sub-agent check measures its input: an input over the content budget is denied before its model runs', async () => {
    const sub = scriptedAgent([{ text: 'never' }], {}, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 'i'.repeat(300) } }] }, { text: 'root done' }], { subAgents: [sub] });
    const runner = makeRunner({ agent: root, runtimePolicy: { agents: { allow: 'all' }, tools: { allow: [SUB] }, maxContentBytes: 200 } });

    await runner.run({ userId: USER, sessionId: 'ses-subbig', message: 'go' });

    expect(sub.model.calls).toHaveLength(0);
    const [audit] = ofKind(await storedEvents(runner, 'ses-subbig'), 'policy_audit');
    expect(decisionOf(audit)).toMatchObject({ operation: 'agent_invocation', subject: SUB, reason: 'content_budget_exceeded' });
  });

  it('a sub-agent call is tool-checked first: a denied tool name never reaches the agent check', async () => {
    const sub = scriptedAgent([{ text: 'never' }], {}, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 'x' } }] }, { text: 'root done' }], { subAgents: [sub] });
    const runner = makeRunner({ agent: root, runtimePolicy: { agents: { allow: 'all' } } });

    await runner.run({ userId: USER, sessionId: 'ses-subtool', message: 'go' });

    const audits = ofKind(await storedEvents(runner, 'ses-subtool'), 'policy_audit');
    expect(audits.map((audit) => decisionOf(audit).operation)).toEqual(['tool_call']);
    expect(sub.model.calls).toHaveLength(0);
  });

  it('a tool needing confirmation inside a sub-agent is answered confirmation_unavailable and nothing pauses', async () => {
    const transfer = countingTool('transfer', () => 'sent', { requireConfirmation: true });
    const sub = scriptedAgent([{ toolCalls: [{ id: 's1', name: 'transfer', args: {} }] }, { text: 'could not transfer' }], { tools: [transfer.tool] }, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 'pay' } }] }, { text: 'root done' }], { subAgents: [sub] });
    const runner = makeRunner({ agent: root });

    const result = await runner.run({ userId: USER, sessionId: 'ses-subconfirm', message: 'go' });

    expect(result.status).toBe('completed');
    expect(transfer.executions).toEqual([]);
    expect(toolResponses(sub.model.calls[1]).get('s1')).toEqual({ success: false, error: { kind: 'confirmation_unavailable' } });
    expect(toolResponses(root.model.calls[1]).get('c1')).toEqual({ success: true, result: { output: 'could not transfer' } });
    expect(ofKind(await storedEvents(runner, 'ses-subconfirm'), 'confirmation_requested')).toEqual([]);
  });

  it('a sub-agent call without a string input is invalid_tool_arguments', async () => {
    const sub = scriptedAgent([{ text: 'never' }], {}, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 3 } }] }, { text: 'root done' }], { subAgents: [sub] });

    await makeRunner({ agent: root }).run({ userId: USER, message: 'go' });

    expect(sub.model.calls).toHaveLength(0);
    expect((toolResponses(root.model.calls[1]).get('c1') as { error: { kind: string } }).error.kind).toBe('invalid_tool_arguments');
  });

  it('the parent model sees only its own turns, not the sub-agent\'s', async () => {
    const sub = scriptedAgent([{ toolCalls: [{ id: 's1', name: 'echo', args: {} }] }, { text: 'sub done' }], { tools: [countingTool('echo').tool] }, SUB);
    const root = scriptedAgent([{ toolCalls: [{ id: 'c1', name: SUB, args: { input: 'x' } }] }, { text: 'root done' }], { subAgents: [sub] });

    await makeRunner({ agent: root }).run({ userId: USER, message: 'go' });

    const seen = root.model.calls[1].contents.map((entry) => (entry.role === 'tool' ? `tool:${entry.callId}` : entry.role));
    expect(seen).toEqual(['user', 'model', 'tool:c1']);
  });

  it('in a parallel turn, a denied sub-agent\'s audit event is committed in model order', async () => {
    const sub = scriptedAgent([{ text: 'never' }], {}, SUB);
    const slow = countingTool('slow', async () => {
      await sleep(30);
      return 1;
    });
    const root = scriptedAgent(
      [{ toolCalls: [{ id: 'c1', name: 'slow', args: {} }, { id: 'c2', name: SUB, args: { input: 'x' } }] }, { text: 'ok' }],
      { tools: [slow.tool], subAgents: [sub], parallelToolCalls: true },
    );
    const runner = makeRunner({ agent: root, runtimePolicy: { agents: { allow: [AGENT] }, tools: { allow: 'all' } } });

    await runner.run({ userId: USER, sessionId: 'ses-subparallel', message: 'go' });

    const order = (await storedEvents(runner, 'ses-subparallel')).map((event) => (event.kind === 'tool_response' ? (event.content as { call_id: string }).call_id : event.kind));
    expect(order).toEqual(['user_message', 'model_turn', 'c1', 'policy_audit', 'c2', 'final_output']);
  });
});
