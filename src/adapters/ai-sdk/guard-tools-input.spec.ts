import { jsonSchema, tool } from 'ai';
import { guardTools, isToolDenial } from './';
import { RuntimePolicy } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { RunnerError } from '../../runner/runner.errors';
import { CapturingSink } from './testing/ai-sdk-fixtures';

const policy = RuntimePolicy.compile({ tools: { allow: ['search'] }, maxArgumentBytes: 256 });
const anyInput = jsonSchema<unknown>({});
const searchTool = () => tool({ inputSchema: anyInput, execute: async () => 'ran' });

function refusal(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a RunnerError');
}

function expectRunnerError(error: unknown, code: string, details?: object): void {
  expect(RunnerError.isRunnerError(error)).toBe(true);
  expect(error).toMatchObject({ code, ...(details === undefined ? {} : { details }) });
}

describe('guardTools: the tool set is validated at the boundary', () => {
  it.each([
    ['null', null],
    ['an array', [searchTool()]],
    ['a string', 'search'],
    ['a Map', new Map([['search', searchTool()]])],
    ['a class instance', new (class Tools {})()],
    ['a Proxy', new Proxy({ search: searchTool() }, {})],
  ])('refuses %s as the tool set with invalid_runner_options {field: tools}', (_label, tools) => {
    expectRunnerError(refusal(() => guardTools(tools as never, { policy })), 'invalid_runner_options', { field: 'tools' });
  });

  it.each([
    ['an empty name', ''],
    ['a control character', 'sea\u0000rch'],
    ['a lone surrogate', 'search\ud800'],
    ['a name over 256 UTF-8 bytes', 'é'.repeat(129)],
  ])('refuses %s as a tool name, naming the tool by position only', (_label, name) => {
    const error = refusal(() => guardTools({ search: searchTool(), [name]: searchTool() }, { policy }));
    expectRunnerError(error, 'invalid_runner_options', { field: 'tools', index: 1, reason: 'invalid_tool_name' });
    if (name.length > 0) expect((error as Error).message).not.toContain(name);
  });

  it('refuses a symbol key', () => {
    expectRunnerError(refusal(() => guardTools({ [Symbol('x')]: searchTool() } as never, { policy })), 'invalid_runner_options', { reason: 'invalid_tool_name' });
  });

  it('refuses a tool without execute, since the SDK would not run it on the server', () => {
    const clientTool = tool({ inputSchema: anyInput });
    expectRunnerError(refusal(() => guardTools({ ask: clientTool } as never, { policy })), 'invalid_runner_options', { field: 'tools', index: 0, reason: 'missing_execute' });
  });

  it('refuses a tool whose execute is a getter without calling it', () => {
    const getter = jest.fn(() => async () => 'ran');
    const sneaky = Object.defineProperty({ inputSchema: anyInput }, 'execute', { get: getter, enumerable: true });
    const tools: Record<string, unknown> = { search: sneaky };
    expectRunnerError(refusal(() => guardTools(tools as never, { policy })), 'invalid_runner_options', { reason: 'invalid_tool' });
    expect(getter).not.toHaveBeenCalled();
  });

  const run = async (): Promise<number> => 1;
  it.each<[string, unknown]>([
    ['a non-object tool', 42],
    ['a non-function execute', { inputSchema: anyInput, execute: 'run' }],
    ['a non-boolean needsApproval', { inputSchema: anyInput, execute: run, needsApproval: 'yes' }],
    ['a non-function onInputAvailable', { inputSchema: anyInput, execute: run, onInputAvailable: 1 }],
  ])('refuses %s with reason invalid_tool', (_label, bad) => {
    expectRunnerError(refusal(() => guardTools({ search: bad } as never, { policy })), 'invalid_runner_options', { field: 'tools', index: 0, reason: 'invalid_tool' });
  });

  it('keeps every other property of a tool and leaves the caller’s tools untouched', () => {
    const original = tool({ description: 'Search the index', inputSchema: anyInput, execute: async () => 'ran', strict: true });
    const guarded = guardTools({ search: original }, { policy });
    expect(guarded.search).not.toBe(original);
    expect(guarded.search).toMatchObject({ description: 'Search the index', inputSchema: anyInput, strict: true });
    expect(guarded.search.execute as unknown).not.toBe(original.execute as unknown);
    expect(Object.keys(original).sort()).toEqual(['description', 'execute', 'inputSchema', 'strict']);
  });
});

describe('guardTools: options', () => {
  it.each([
    ['missing', undefined],
    ['a spec instead of a compiled policy', { tools: { allow: 'all' } }],
    ['a look-alike object', { checkTool: () => ({ outcome: 'allow' }) }],
  ])('refuses a policy that is %s with invalid_runner_runtime_policy', (_label, bad) => {
    expectRunnerError(refusal(() => guardTools({}, { policy: bad } as never)), 'invalid_runner_runtime_policy', { reason: 'invalid_runtime_policy' });
  });

  it.each([
    ['an audit sink without record', { auditSink: {} }, 'auditSink'],
    ['a non-function onDecision', { onDecision: 'log' }, 'onDecision'],
    ['an unknown key', { auditDecisions: 'all' }, 'auditDecisions'],
  ])('refuses %s with invalid_runner_options naming the field', (_label, extra, field) => {
    expectRunnerError(refusal(() => guardTools({}, { policy, ...extra } as never)), 'invalid_runner_options', { field });
  });

  it('refuses options that are not a plain object, a Proxy included', () => {
    expectRunnerError(refusal(() => guardTools({}, 'policy' as never)), 'invalid_runner_options', { field: 'options' });
    expectRunnerError(refusal(() => guardTools({}, new Proxy({ policy }, {}) as never)), 'invalid_runner_options', { field: 'options' });
  });
});

describe('guardTools: arguments that are not JSON are denied, never a crash (spec 02 §4)', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const throwing = Object.defineProperty({}, 'q', { get: () => { throw new Error('boom'); }, enumerable: true });

  it.each([
    ['a function', { q: () => 1 }, 'invalid_arguments'],
    ['a cycle', cyclic, 'invalid_arguments'],
    ['a BigInt', { q: BigInt(1) }, 'invalid_arguments'],
    ['a Date', { q: new Date(0) }, 'invalid_arguments'],
    ['a getter that throws', throwing, 'invalid_arguments'],
    ['arguments over maxArgumentBytes', { q: 'x'.repeat(300) }, 'argument_budget_exceeded'],
  ])('denies %s: the tool never runs and execute throws the denial', async (_label, args, reason) => {
    const execute = jest.fn(async () => 'ran');
    const sink = new CapturingSink();
    const guarded = guardTools({ search: tool({ inputSchema: anyInput, execute }) }, { policy, auditSink: sink });
    const failure = await Promise.resolve(guarded.search.execute!(args, { toolCallId: 'c1', messages: [], context: {} })).catch((error: unknown) => error);
    expect(execute).not.toHaveBeenCalled();
    expect(sink.decisions.map((d) => d.reason)).toEqual([reason]);
    expect(isToolDenial(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'runtime_policy_denied', details: { operation: 'tool_call', outcome: 'deny', reason } });
  });

  it('decides again for a direct call without SDK options, and keeps serving after bad input', async () => {
    const execute = jest.fn(async () => 'ran');
    const guarded = guardTools({ search: tool({ inputSchema: anyInput, execute }) }, { policy });
    await expect(Promise.resolve(guarded.search.execute!({ q: BigInt(2) }, undefined as never))).rejects.toMatchObject({ code: 'runtime_policy_denied', details: { reason: 'invalid_arguments' } });
    await expect(guarded.search.execute!({ q: 'fine' }, new Proxy({}, {}) as never)).resolves.toBe('ran');
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('ignores a throwing onDecision listener', async () => {
    const decisions: PolicyDecision[] = [];
    const onDecision = (decision: PolicyDecision) => {
      decisions.push(decision);
      throw new Error('listener down');
    };
    const guarded = guardTools({ search: tool({ inputSchema: anyInput, execute: async () => 'ran' }) }, { policy, onDecision });
    await expect(guarded.search.execute!({ q: 'fine' }, { toolCallId: 'c1', messages: [], context: {} })).resolves.toBe('ran');
    expect(decisions.map((d) => [d.operation, d.outcome])).toEqual([
      ['tool_call', 'allow'],
      ['content', 'allow'],
    ]);
  });
});
