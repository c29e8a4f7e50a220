import { AdmissionController } from '../admission/admission-controller';
import { RuntimePolicy } from '../policy/runtime-policy';
import { SessionServiceDouble } from './testing/session-service-double';
import { Runner } from './runner';
import { RunnerError } from './runner.errors';
import type { RunnerOptions } from './runner.types';
import { APP, countingTool, CountingSessionService, expectError, makeRunner, runnerError, scriptedAgent, USER } from './testing/runner-harness';

function constructionError(options: Record<string, unknown>): RunnerError {
  try {
    new Runner({ appName: APP, agent: scriptedAgent([]), sessionService: new SessionServiceDouble(), ...options } as unknown as RunnerOptions);
  } catch (error) {
    if (RunnerError.isRunnerError(error)) return error;
    throw error;
  }
  throw new Error('the Runner accepted the options');
}

describe('Runner options (spec 03 §5)', () => {
  it.each([
    ['an unknown key', { colour: 'blue' }, 'colour'],
    ['an empty appName', { appName: '' }, 'appName'],
    ['an appName of 129 characters', { appName: 'a'.repeat(129) }, 'appName'],
    ['a session service missing methods', { sessionService: { getSession: () => undefined } }, 'sessionService'],
    ['a zero maxModelCalls', { maxModelCalls: 0 }, 'maxModelCalls'],
    ['a fractional runTimeoutMs', { runTimeoutMs: 1.5 }, 'runTimeoutMs'],
    ['an audit sink without record', { auditSink: {} }, 'auditSink'],
    ['plugins that are not an array', { plugins: {} }, 'plugins'],
  ])('%s is invalid_runner_options {field}', (_label, options, field) => {
    expectError(constructionError(options), 'invalid_runner_options', { field });
  });

  it('a missing agent is invalid_runner_options {field: agent}', () => {
    expectError(constructionError({ agent: undefined }), 'invalid_runner_options', { field: 'agent' });
  });

  it('duplicate plugin names are refused', () => {
    expectError(constructionError({ plugins: [{ name: 'p' }, { name: 'p' }] }), 'invalid_runner_options', { field: 'plugins' });
  });

  it('tool and sub-agent names must be unique and well formed', () => {
    const tool = countingTool('dup').tool;
    expectError(constructionError({ agent: scriptedAgent([], { tools: [tool, tool] }) }), 'invalid_runner_options');
    expectError(constructionError({ agent: scriptedAgent([], { tools: [countingTool('bad name!').tool] }) }), 'invalid_runner_options');
    expectError(constructionError({ agent: scriptedAgent([], { tools: [countingTool('helper').tool], subAgents: [scriptedAgent([], {}, 'helper')] }) }), 'invalid_runner_options');
    expectError(constructionError({ agent: scriptedAgent([], { subAgents: [scriptedAgent([], {}, 'sub agent')] }) }), 'invalid_runner_options');
  });

  it('a tool schema Ajv refuses in strict mode is invalid_runner_options', () => {
    const tool = countingTool('strict', () => 1, { parameters: { type: 'object', unknownKeyword: true } }).tool;
    expectError(constructionError({ agent: scriptedAgent([], { tools: [tool] }) }), 'invalid_runner_options');
  });

  it.each([
    ['an unknown key', { controller: new AdmissionController(), extra: 1 }],
    ['a bad overflow', { controller: new AdmissionController(), overflow: 'sometimes' }],
    ['a negative queueTimeoutMs', { controller: new AdmissionController(), queueTimeoutMs: -1 }],
    ['a controller without acquire', { controller: { release: () => true } }],
    ['no controller', {}],
  ])('admission with %s is invalid_runner_admission_control', (_label, admission) => {
    expect(constructionError({ admission }).code).toBe('invalid_runner_admission_control');
  });

  it('admission accepts Infinity as queueTimeoutMs', () => {
    expect(() => makeRunner({ agent: scriptedAgent([]), admission: { controller: new AdmissionController(), overflow: 'queue', queueTimeoutMs: Infinity } })).not.toThrow();
  });

  it('a policy spec that does not compile is invalid_runner_runtime_policy with the compile code', () => {
    expectError(constructionError({ runtimePolicy: { agents: { allow: 'everyone' } } }), 'invalid_runner_runtime_policy', { reason: 'invalid_runtime_policy_allow' });
    expectError(constructionError({ runtimePolicy: { maxContentBytes: -1 } }), 'invalid_runner_runtime_policy', { reason: 'invalid_max_content_bytes' });
    expectError(constructionError({ runtimePolicy: { surprise: true } }), 'invalid_runner_runtime_policy', { reason: 'unsupported_runtime_policy_options' });
  });

  it('a compiled policy is used as given', () => {
    const policy = RuntimePolicy.compile({ agents: { allow: 'all' } });
    expect(() => makeRunner({ agent: scriptedAgent([]), runtimePolicy: policy })).not.toThrow();
  });

  it('appName and sessionService are read-only properties holding the options given', () => {
    const sessionService = new SessionServiceDouble();
    const runner = makeRunner({ agent: scriptedAgent([]), sessionService });
    expect(runner.appName).toBe(APP);
    expect(runner.sessionService).toBe(sessionService);
    expect(() => ((runner as { appName: string }).appName = 'other')).toThrow(TypeError);
  });
});

describe('Run requests (spec 03 §5)', () => {
  it.each(['', 'has space', 'x'.repeat(129), 'slash/inside', 'é'])('session id %p is invalid_run_request {field: session_id} before anything is touched', async (sessionId) => {
    const sessions = new CountingSessionService();
    const agent = scriptedAgent([{ text: 'never' }]);
    const runner = makeRunner({ agent, sessionService: sessions });

    expectError(await runnerError(runner.run({ userId: USER, sessionId, message: 'hi' })), 'invalid_run_request', { field: 'session_id' });
    expectError(await runnerError(runner.resume({ userId: USER, sessionId, invocationId: 'inv-x', callId: 'c1', confirmed: true })), 'invalid_run_request', { field: 'session_id' });
    expect(sessions.calls).toEqual([]);
    expect(agent.model.calls).toHaveLength(0);
  });

  it('a session id of the full pattern is accepted and a missing one is generated to fit it', async () => {
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'a' }, { text: 'b' }]) });

    expect((await runner.run({ userId: USER, sessionId: 'Ab0._:-'.repeat(18).slice(0, 128), message: 'hi' })).status).toBe('completed');
    const generated = await runner.run({ userId: USER, message: 'hi' });
    expect(generated.session_id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  });

  it('a malformed message or user id is invalid_run_request', async () => {
    const runner = makeRunner({ agent: scriptedAgent([]) });
    expectError(await runnerError(runner.run({ userId: USER, message: { role: 'model', parts: [] } as never })), 'invalid_run_request', { field: 'message' });
    expectError(await runnerError(runner.run({ userId: '', message: 'hi' })), 'invalid_run_request', { field: 'user_id' });
  });

  it.each([
    ['U+0000 in a string', 'a\u0000b'],
    ['U+0000 in a data part', { role: 'user', parts: [{ data: { ['k\u0000']: 1 } }] }],
    ['a lone surrogate', '\ud800x'],
  ])('a message with %s, which the session store would refuse, is invalid_run_request {field: message} before anything is read or admitted', async (_what, message) => {
    const sessions = new CountingSessionService();
    const agent = scriptedAgent([{ text: 'never' }]);
    let admitted = 0;
    const runner = makeRunner({ agent, sessionService: sessions });
    expectError(await runnerError(runner.run({ userId: USER, message: message as never, onAdmitted: () => void admitted++ })), 'invalid_run_request', { field: 'message' });
    expect({ sessions: sessions.calls, admitted, modelCalls: agent.model.calls.length }).toEqual({ sessions: [], admitted: 0, modelCalls: 0 });
  });

  it('a later run on the same session shows the model the earlier turns', async () => {
    const agent = scriptedAgent([{ text: 'first answer' }, { text: 'second answer' }]);
    const runner = makeRunner({ agent });

    await runner.run({ userId: USER, sessionId: 'ses-history', message: 'one' });
    await runner.run({ userId: USER, sessionId: 'ses-history', message: 'two' });

    expect(agent.model.calls[1].contents).toEqual([
      { role: 'user', content: { role: 'user', parts: [{ text: 'one' }] } },
      { role: 'model', text: 'first answer' },
      { role: 'user', content: { role: 'user', parts: [{ text: 'two' }] } },
    ]);
  });
});
