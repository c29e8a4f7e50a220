import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { canonicalJson } from './policy-json';
import { RuntimePolicyError } from './runtime-policy.errors';

describe('§7 RuntimePolicyError', () => {
  it('is an AgentRuntimeError named RuntimePolicyError with a code and optional frozen details', () => {
    const error = new RuntimePolicyError('unsupported_json_term', { path: ['a'], kind: 'cycle' });
    expect(error).toBeInstanceOf(AgentRuntimeError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('RuntimePolicyError');
    expect(error.code).toBe('unsupported_json_term');
    expect(error.details).toEqual({ path: ['a'], kind: 'cycle' });
    expect(Object.isFrozen(error.details)).toBe(true);
    expect(new RuntimePolicyError('invalid_measure_limit').details).toBeUndefined();
  });

  it('derives its message from the code and details only', () => {
    expect(new RuntimePolicyError('invalid_utf8', { path: [] }).message).toBe('invalid_utf8 {"path":[]}');
    expect(new RuntimePolicyError('invalid_runtime_policy').message).toBe('invalid_runtime_policy');
  });

  it('isRuntimePolicyError is a brand check that runs no trap', () => {
    const error = new RuntimePolicyError('schema_mismatch', { mismatches: ['x'] });
    expect(RuntimePolicyError.isRuntimePolicyError(error)).toBe(true);
    const trap = jest.fn();
    const proxy = new Proxy(error, { getPrototypeOf: trap, get: trap, has: trap });
    expect(RuntimePolicyError.isRuntimePolicyError(proxy)).toBe(false);
    expect(RuntimePolicyError.isRuntimePolicyError(Object.create(RuntimePolicyError.prototype))).toBe(false);
    expect(RuntimePolicyError.isRuntimePolicyError({ code: 'invalid_utf8' })).toBe(false);
    expect(RuntimePolicyError.isRuntimePolicyError(null)).toBe(false);
    expect(trap).not.toHaveBeenCalled();
  });

  it('is what canonicalJson throws: path as keys and index strings, never the value', () => {
    let caught: unknown;
    try {
      canonicalJson({ list: ['SECRET', 1n] });
    } catch (error) {
      caught = error;
    }
    expect(RuntimePolicyError.isRuntimePolicyError(caught)).toBe(true);
    expect((caught as RuntimePolicyError).details).toEqual({ path: ['list', '1'], kind: 'bigint' });
    expect((caught as RuntimePolicyError).message).not.toContain('SECRET');
  });
});
