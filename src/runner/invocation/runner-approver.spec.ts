import { verifyDecisionDigest } from '../../policy/policy-decision';
import { countingTool, decisionOf, expectError, makeRunner, ofKind, Observers, runnerError, scriptedAgent, storedEvents, toolResponses, USER } from '../testing/runner-harness';
import { SessionServiceDouble } from '../testing/session-service-double';
import type { Runner } from '../runner';

const allowAll = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const } };
const denyDeploy = { agents: { allow: 'all' as const }, tools: { deny: ['deploy'] } };

/** An agent whose first turn calls `deploy`, which needs a human's confirmation. */
function deployAgent() {
  const deploy = countingTool('deploy', () => ({ deployed: true }), { requireConfirmation: true });
  const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'deploy', args: { target: 'prod' } }] }, { text: 'done' }], { tools: [deploy.tool] });
  return { agent, deploy };
}

async function paused(runner: Runner, sessionId: string): Promise<string> {
  const result = await runner.run({ userId: USER, sessionId, message: 'ship it' });
  expect(result.status).toBe('paused');
  return result.invocation_id;
}

describe("The approver's principal id on an answered confirmation (issue 22)", () => {
  it('a confirmed call: its tool_response event carries confirmed_by, which the model never sees', async () => {
    const { agent, deploy } = deployAgent();
    const runner = makeRunner({ agent, runtimePolicy: allowAll });
    const invocationId = await paused(runner, 'ses-ok');

    await runner.resume({ userId: USER, sessionId: 'ses-ok', invocationId, callId: 'c1', confirmed: true, confirmedBy: 'operator' });

    expect(deploy.executions).toEqual([{ target: 'prod' }]);
    const [response] = ofKind(await storedEvents(runner, 'ses-ok'), 'tool_response');
    expect(response.content).toEqual({ call_id: 'c1', tool: 'deploy', response: { success: true, result: { deployed: true } }, confirmed_by: 'operator' });
    expect(toolResponses(agent.model.calls[1]).get('c1')).toEqual({ success: true, result: { deployed: true } });
    expect(JSON.stringify(agent.model.calls[1])).not.toContain('operator');
  });

  it("a rejected confirmation's response carries it too", async () => {
    const { agent, deploy } = deployAgent();
    const runner = makeRunner({ agent });
    const invocationId = await paused(runner, 'ses-no');

    await runner.resume({ userId: USER, sessionId: 'ses-no', invocationId, callId: 'c1', confirmed: false, confirmedBy: 'operator' });

    expect(deploy.executions).toEqual([]);
    const [response] = ofKind(await storedEvents(runner, 'ses-no'), 'tool_response');
    expect(response.content).toMatchObject({ response: { success: false, error: { kind: 'confirmation_rejected' } }, confirmed_by: 'operator' });
  });

  it("the re-check's decision (denied by a policy installed after the pause) carries approved_by, in the session and the audit sink", async () => {
    const observers = new Observers();
    const sessionService = new SessionServiceDouble();
    const { agent, deploy } = deployAgent();
    const invocationId = await paused(makeRunner({ agent, sessionService, runtimePolicy: allowAll }), 'ses-deny');
    const strict = makeRunner({ agent, sessionService, runtimePolicy: denyDeploy, auditSink: observers.auditSink });

    await strict.resume({ userId: USER, sessionId: 'ses-deny', invocationId, callId: 'c1', confirmed: true, confirmedBy: 'operator' });

    expect(deploy.executions).toEqual([]);
    const events = await storedEvents(strict, 'ses-deny');
    const decision = decisionOf(ofKind(events, 'policy_audit')[0]);
    expect(decision).toMatchObject({ operation: 'tool_call', subject: 'deploy', outcome: 'deny', approved_by: 'operator' });
    expect(verifyDecisionDigest(decision)).toBe(true);
    expect(observers.auditRecords).toEqual([decision]);
    expect(ofKind(events, 'tool_response')[0].content).toMatchObject({ confirmed_by: 'operator' });
  });

  it('without confirmedBy the response has no confirmed_by and the decision has approved_by null', async () => {
    const sessionService = new SessionServiceDouble();
    const { agent } = deployAgent();
    const invocationId = await paused(makeRunner({ agent, sessionService, runtimePolicy: allowAll }), 'ses-anon');
    const strict = makeRunner({ agent, sessionService, runtimePolicy: denyDeploy });

    await strict.resume({ userId: USER, sessionId: 'ses-anon', invocationId, callId: 'c1', confirmed: true });

    const events = await storedEvents(strict, 'ses-anon');
    expect(decisionOf(ofKind(events, 'policy_audit')[0]).approved_by).toBeNull();
    expect(ofKind(events, 'tool_response')[0].content).not.toHaveProperty('confirmed_by');
  });

  it('a confirmedBy that is not a valid id, or one without a callId, is refused before anything changes', async () => {
    const { agent, deploy } = deployAgent();
    const runner = makeRunner({ agent });
    const invocationId = await paused(runner, 'ses-bad');
    const base = { userId: USER, sessionId: 'ses-bad', invocationId };

    for (const confirmedBy of ['', 'a\u0000b', 'x'.repeat(300), 7 as unknown as string]) {
      expectError(await runnerError(runner.resume({ ...base, callId: 'c1', confirmed: true, confirmedBy })), 'invalid_run_request', { field: 'confirmed_by' });
    }
    expectError(await runnerError(runner.resume({ ...base, confirmedBy: 'operator' })), 'invalid_run_request', { field: 'call_id' });
    expect(deploy.executions).toEqual([]);
    const result = await runner.resume({ ...base, callId: 'c1', confirmed: true, confirmedBy: 'operator' });
    expect(result.status).toBe('completed');
  });
});
