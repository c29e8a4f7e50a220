import { systemClock } from '../shared/time/clock';
import { sha256Hex } from '../shared/text/sha256';
import { canonicalJson } from '../json';
import { RuntimePolicy } from './runtime-policy';
import { RuntimePolicyError, type RuntimePolicyErrorCode } from './runtime-policy.errors';
import type { RuntimePolicySpec } from './runtime-policy-compiler';

function compileError(spec: unknown): RuntimePolicyError {
  try {
    RuntimePolicy.compile(spec as RuntimePolicySpec);
  } catch (error) {
    expect(error).toBeInstanceOf(RuntimePolicyError);
    return error as RuntimePolicyError;
  }
  throw new Error('compile did not throw');
}

const codeOf = (spec: unknown): RuntimePolicyErrorCode => compileError(spec).code;

/** A Proxy whose every trap counts and throws. */
function trapped<T extends object>(target: T): { proxy: T; traps: () => number } {
  let count = 0;
  const handler = new Proxy({}, { get: () => () => { count++; throw new Error('trap'); } });
  return { proxy: new Proxy(target, handler), traps: () => count };
}

const withGetter = (base: object, key: string, getter: () => unknown): object =>
  Object.defineProperty({ ...base }, key, { get: getter, enumerable: true });

describe('§3 RuntimePolicy.compile: keys, types and defaults', () => {
  it('fails closed by default: no agent, no tool, 65536 argument bytes, 1048576 content bytes', () => {
    const policy = RuntimePolicy.compile({});
    expect(policy.maxArgumentBytes).toBe(65_536);
    expect(policy.maxContentBytes).toBe(1_048_576);
    expect(policy.describe()).toMatchObject({ agents: { allow: [], deny: [] }, tools: { allow: [], deny: [] } });
    expect(policy.checkAgent('a', '').reason).toBe('not_allowed');
    expect(policy.checkTool('t', {}).reason).toBe('not_allowed');
  });

  it('treats an omitted allow or deny, and any key whose value is undefined, as absent', () => {
    const spec = { id: undefined, agents: { allow: ['a'], deny: undefined }, tools: undefined, maxArgumentBytes: undefined };
    const policy = RuntimePolicy.compile(spec);
    expect(policy.fingerprint).toBe(RuntimePolicy.compile({ agents: { allow: ['a'] } }).fingerprint);
    expect(policy.maxArgumentBytes).toBe(65_536);
    expect(policy.id).toBe(`policy-${policy.fingerprint.slice(0, 16)}`);
  });

  it('accepts selectors "all", [], duplicates and names of 1 and 256 UTF-8 bytes', () => {
    const name256 = 'é'.repeat(128);
    const policy = RuntimePolicy.compile({
      agents: { allow: 'all', deny: [] },
      tools: { allow: ['x', 'x', name256, '😀'], deny: 'all' },
    });
    expect(policy.describe()).toMatchObject({
      agents: { allow: 'all', deny: [] },
      tools: { allow: ['x', name256, '😀'].sort(), deny: 'all' },
    });
  });

  it('accepts limits 0 and Number.MAX_SAFE_INTEGER', () => {
    const policy = RuntimePolicy.compile({ maxArgumentBytes: 0, maxContentBytes: Number.MAX_SAFE_INTEGER });
    expect(policy.maxArgumentBytes).toBe(0);
    expect(policy.maxContentBytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('accepts an id of 1..128 UTF-8 bytes and a null-prototype spec', () => {
    expect(RuntimePolicy.compile({ id: 'p' }).id).toBe('p');
    expect(RuntimePolicy.compile({ id: '€'.repeat(42) + 'ab' }).id).toHaveLength(44);
    const bare = Object.assign(Object.create(null) as object, { id: 'bare' });
    expect(RuntimePolicy.compile(bare).id).toBe('bare');
  });
});

describe('§3 RuntimePolicy.compile: error codes', () => {
  it.each([null, undefined, 'spec', 1, [], new Map(), new (class Spec {})(), Object.create({})])(
    'refuses the spec %p with invalid_runtime_policy',
    (spec) => {
      expect(codeOf(spec)).toBe('invalid_runtime_policy');
      expect(compileError(spec).details).toBeUndefined();
    },
  );

  it('refuses a Proxy spec with invalid_runtime_policy without running a trap', () => {
    const { proxy, traps } = trapped({ agents: { allow: 'all' } });
    expect(codeOf(proxy)).toBe('invalid_runtime_policy');
    expect(traps()).toBe(0);
  });

  it('refuses an unknown top-level key, a symbol key and a seed-style key with unsupported_runtime_policy_options', () => {
    expect(codeOf({ allow: 'all' })).toBe('unsupported_runtime_policy_options');
    expect(codeOf({ max_argument_bytes: 1 })).toBe('unsupported_runtime_policy_options');
    expect(codeOf({ [Symbol('x')]: 1 })).toBe('unsupported_runtime_policy_options');
    expect(codeOf({ unknown: undefined })).toBe('unsupported_runtime_policy_options');
    expect(compileError({ extra: 1 }).details).toBeUndefined();
  });

  describe.each(['agents', 'tools'] as const)('rules object %s', (kind) => {
    it.each([null, 'all', [], ['a'], 5, new Map(), Object.create({})])('refuses %p with invalid_runtime_policy_rules', (rules) => {
      const error = compileError({ [kind]: rules });
      expect(error.code).toBe('invalid_runtime_policy_rules');
      expect(error.details).toEqual({ kind });
    });

    it('refuses a Proxy or an accessor as rules without running them', () => {
      const { proxy, traps } = trapped({ allow: 'all' });
      expect(compileError({ [kind]: proxy }).details).toEqual({ kind });
      expect(codeOf({ [kind]: proxy })).toBe('invalid_runtime_policy_rules');
      expect(traps()).toBe(0);
      const getter = jest.fn(() => ({ allow: 'all' }));
      expect(codeOf(withGetter({}, kind, getter))).toBe('invalid_runtime_policy_rules');
      expect(getter).not.toHaveBeenCalled();
    });

    it('refuses a key other than allow and deny with unsupported_runtime_policy_rules', () => {
      for (const rules of [{ allows: [] }, { allow: [], extra: undefined }, { [Symbol('s')]: [] }]) {
        const error = compileError({ [kind]: rules });
        expect(error.code).toBe('unsupported_runtime_policy_rules');
        expect(error.details).toEqual({ kind });
      }
    });

    const badSelectors: Array<[string, unknown]> = [
      ['null', null],
      ['a string other than "all"', 'ALL'],
      ['a Set', new Set(['a'])],
      ['an array with a hole', [, 'a']], // eslint-disable-line no-sparse-arrays
      ['an empty name', ['']],
      ['a non-string name', ['a', 1]],
      ['a name of 257 UTF-8 bytes', ['é'.repeat(128) + 'x']],
      ['a name with a lone surrogate', ['\ud800']],
      ['a boxed string name', [Object('a')]],
      ['an array subclass', class extends Array {}.from(['a'])],
      ['a Proxy of an array', new Proxy(['a'], {})],
    ];

    it.each(badSelectors)('refuses allow as %s with invalid_runtime_policy_allow', (_, selector) => {
      const error = compileError({ [kind]: { allow: selector } });
      expect(error.code).toBe('invalid_runtime_policy_allow');
      expect(error.details).toEqual({ kind });
    });

    it.each(badSelectors)('refuses deny as %s with invalid_runtime_policy_deny', (_, selector) => {
      const error = compileError({ [kind]: { deny: selector } });
      expect(error.code).toBe('invalid_runtime_policy_deny');
      expect(error.details).toEqual({ kind });
    });

    it('refuses a selector element that is an accessor without calling it', () => {
      const names = ['a'];
      const getter = jest.fn(() => 'b');
      Object.defineProperty(names, 1, { get: getter, enumerable: true });
      expect(codeOf({ [kind]: { allow: names } })).toBe('invalid_runtime_policy_allow');
      expect(getter).not.toHaveBeenCalled();
    });
  });

  it.each([-1, 1.5, NaN, Infinity, 2 ** 53, '10', null, 10n])('refuses maxArgumentBytes %p', (value) => {
    expect(codeOf({ maxArgumentBytes: value })).toBe('invalid_max_argument_bytes');
  });

  it.each([-1, 1.5, NaN, Infinity, 2 ** 53, '10', null, 10n])('refuses maxContentBytes %p', (value) => {
    expect(codeOf({ maxContentBytes: value })).toBe('invalid_max_content_bytes');
  });

  it('refuses limits given as getters without calling them', () => {
    const getter = jest.fn(() => 10);
    expect(codeOf(withGetter({}, 'maxArgumentBytes', getter))).toBe('invalid_max_argument_bytes');
    expect(codeOf(withGetter({}, 'maxContentBytes', getter))).toBe('invalid_max_content_bytes');
    expect(getter).not.toHaveBeenCalled();
  });

  it.each<[string, unknown]>([
    ['empty', ''],
    ['129 UTF-8 bytes', 'é'.repeat(64) + 'x'],
    ['a lone surrogate', 'p\udc00'],
    ['a number', 7],
    ['null', null],
    ['a boxed string', Object('p')],
  ])('refuses an id that is %s with invalid_runtime_policy_id', (_, id) => {
    expect(codeOf({ id })).toBe('invalid_runtime_policy_id');
  });

  it('refuses an id given as a getter without calling it', () => {
    const getter = jest.fn(() => 'p');
    expect(codeOf(withGetter({}, 'id', getter))).toBe('invalid_runtime_policy_id');
    expect(getter).not.toHaveBeenCalled();
  });

  describe('precedence: the first failing rule in the order of the table wins', () => {
    const everythingBad = {
      agents: { allow: 1, deny: 1, extra: 1 },
      tools: null,
      maxArgumentBytes: -1,
      maxContentBytes: -1,
      id: '',
    };

    it.each<[string, object, RuntimePolicyErrorCode, object | undefined]>([
      ['unknown keys before everything else', { ...everythingBad, bogus: 1 }, 'unsupported_runtime_policy_options', undefined],
      ['agents before tools and limits', everythingBad, 'unsupported_runtime_policy_rules', { kind: 'agents' }],
      ['agents rules type first', { ...everythingBad, agents: 'x' }, 'invalid_runtime_policy_rules', { kind: 'agents' }],
      ['agents allow before deny', { ...everythingBad, agents: { allow: 1, deny: 1 } }, 'invalid_runtime_policy_allow', { kind: 'agents' }],
      ['agents deny', { ...everythingBad, agents: { allow: [], deny: 1 } }, 'invalid_runtime_policy_deny', { kind: 'agents' }],
      ['tools after agents', { ...everythingBad, agents: {} }, 'invalid_runtime_policy_rules', { kind: 'tools' }],
      ['tools unknown key before allow', { ...everythingBad, agents: {}, tools: { allow: 1, x: 1 } }, 'unsupported_runtime_policy_rules', { kind: 'tools' }],
      ['tools allow before deny', { ...everythingBad, agents: {}, tools: { allow: 1, deny: 1 } }, 'invalid_runtime_policy_allow', { kind: 'tools' }],
      ['maxArgumentBytes after the rules', { ...everythingBad, agents: {}, tools: {} }, 'invalid_max_argument_bytes', undefined],
      ['maxContentBytes after maxArgumentBytes', { ...everythingBad, agents: {}, tools: {}, maxArgumentBytes: 1 }, 'invalid_max_content_bytes', undefined],
      ['id last', { ...everythingBad, agents: {}, tools: {}, maxArgumentBytes: 1, maxContentBytes: 1 }, 'invalid_runtime_policy_id', undefined],
    ])('%s', (_, spec, code, details) => {
      const error = compileError(spec);
      expect(error.code).toBe(code);
      expect(error.details).toEqual(details);
    });
  });
});

describe('§3 RuntimePolicy.compile: the compiled policy', () => {
  it('is frozen with read-only id, fingerprint and limits', () => {
    const policy = RuntimePolicy.compile({ id: 'p', maxArgumentBytes: 5, maxContentBytes: 6 });
    expect(Object.isFrozen(policy)).toBe(true);
    expect(() => {
      (policy as { id: string }).id = 'other';
    }).toThrow(TypeError);
    expect([policy.id, policy.maxArgumentBytes, policy.maxContentBytes]).toEqual(['p', 5, 6]);
  });

  it('holds private copies: later changes to the spec have no effect', () => {
    const allow = ['search'];
    const spec = { tools: { allow }, maxArgumentBytes: 100 };
    const policy = RuntimePolicy.compile(spec);
    const fingerprint = policy.fingerprint;
    allow.push('shell');
    allow[0] = 'other';
    spec.maxArgumentBytes = 1;
    (spec.tools as { allow: unknown }).allow = 'all';
    expect(policy.checkTool('search', {}).reason).toBe('allowed');
    expect(policy.checkTool('shell', {}).reason).toBe('not_allowed');
    expect(policy.maxArgumentBytes).toBe(100);
    expect(policy.fingerprint).toBe(fingerprint);
  });

  it('cannot be constructed except through compile', () => {
    const Ctor = RuntimePolicy as unknown as new (...args: unknown[]) => unknown;
    expect(() => new Ctor(Symbol('forged'), {}, {})).toThrow(RuntimePolicyError);
  });

  describe('fingerprint', () => {
    it('is the SHA-256 of the canonical rules and limits, without the id', () => {
      const policy = RuntimePolicy.compile({
        id: 'ignored',
        agents: { allow: ['b', 'a', 'b'] },
        tools: { allow: 'all', deny: ['rm'] },
        maxArgumentBytes: 10,
        maxContentBytes: 20,
      });
      const expected = sha256Hex(
        canonicalJson({
          agents: { allow: ['a', 'b'], deny: [] },
          tools: { allow: 'all', deny: ['rm'] },
          max_argument_bytes: 10,
          max_content_bytes: 20,
        }),
      );
      expect(policy.fingerprint).toBe(expected);
      expect(policy.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    });

    it('is shared by two policies that differ only in id', () => {
      const spec = { agents: { allow: ['a'] }, maxContentBytes: 9 };
      expect(RuntimePolicy.compile({ ...spec, id: 'one' }).fingerprint).toBe(RuntimePolicy.compile({ ...spec, id: 'two' }).fingerprint);
    });

    it('ignores selector order and duplicates, sorting by UTF-16 code units', () => {
      const a = RuntimePolicy.compile({ tools: { allow: ['\uffff', '\u{10000}', 'b', 'a'], deny: ['x', 'x'] } });
      const b = RuntimePolicy.compile({ tools: { allow: ['a', 'b', '\u{10000}', '\uffff', 'a'], deny: ['x'] } });
      expect(a.fingerprint).toBe(b.fingerprint);
      expect(a.describe()).toMatchObject({ tools: { allow: ['a', 'b', '\u{10000}', '\uffff'] } });
    });

    it('changes with any limit or selector membership, and between agents and tools', () => {
      const base = { agents: { allow: ['a'] }, tools: { deny: ['t'] }, maxArgumentBytes: 1, maxContentBytes: 2 };
      const variants: RuntimePolicySpec[] = [
        base,
        { ...base, maxArgumentBytes: 3 },
        { ...base, maxContentBytes: 3 },
        { ...base, agents: { allow: ['a', 'b'] } },
        { ...base, agents: { allow: 'all' } },
        { ...base, agents: { allow: ['a'], deny: ['a'] } },
        { ...base, tools: { deny: 'all' } },
        { ...base, tools: { allow: ['a'], deny: ['t'] } },
        { ...base, agents: {}, tools: { allow: ['a'], deny: ['t'] } },
      ];
      const fingerprints = new Set(variants.map((spec) => RuntimePolicy.compile(spec).fingerprint));
      expect(fingerprints.size).toBe(variants.length);
    });
  });

  it('takes "policy-" and the first 16 hex digits of the fingerprint as default id', () => {
    const policy = RuntimePolicy.compile({ tools: { allow: ['x'] } });
    expect(policy.id).toBe(`policy-${policy.fingerprint.slice(0, 16)}`);
  });

  describe('describe()', () => {
    it('reports schema_version, id, fingerprint, normalised selectors and limits, deep-frozen', () => {
      const policy = RuntimePolicy.compile({ id: 'p1', agents: { allow: ['z', 'a', 'z'], deny: 'all' }, maxArgumentBytes: 7 });
      const description = policy.describe();
      expect(description).toEqual({
        schema_version: 1,
        id: 'p1',
        fingerprint: policy.fingerprint,
        agents: { allow: ['a', 'z'], deny: 'all' },
        tools: { allow: [], deny: [] },
        max_argument_bytes: 7,
        max_content_bytes: 1_048_576,
      });
      const d = description as unknown as { agents: { allow: string[] }; tools: object };
      for (const part of [description, d.agents, d.agents.allow, d.tools]) expect(Object.isFrozen(part)).toBe(true);
      expect(JSON.parse(JSON.stringify(description))).toEqual(description);
    });

    it('reports {schema_version: 1, status: "invalid"} on a receiver that is not a compiled policy', () => {
      const policy = RuntimePolicy.compile({});
      const { describe: detached } = policy;
      for (const receiver of [undefined, null, {}, { ...policy }, Object.create(policy), new Proxy(policy, {})]) {
        const description = detached.call(receiver);
        expect(description).toEqual({ schema_version: 1, status: 'invalid' });
        expect(Object.isFrozen(description)).toBe(true);
      }
    });
  });

  it('isRuntimePolicy is a brand check, refusing look-alikes, prototypes and Proxies', () => {
    const policy = RuntimePolicy.compile({});
    expect(RuntimePolicy.isRuntimePolicy(policy)).toBe(true);
    for (const other of [undefined, null, 'policy', {}, { ...policy }, Object.create(policy), new Proxy(policy, {})]) {
      expect(RuntimePolicy.isRuntimePolicy(other)).toBe(false);
    }
  });

  describe('withDeps', () => {
    it('returns the same rules, id and fingerprint bound to other deps', () => {
      const policy = RuntimePolicy.compile({ id: 'p', tools: { allow: ['t'] } });
      const events = { emit: jest.fn() };
      const clock = { ...systemClock, wallNow: () => 1234 };
      const bound = policy.withDeps({ events, clock });
      expect(bound).not.toBe(policy);
      expect(RuntimePolicy.isRuntimePolicy(bound)).toBe(true);
      expect(bound.describe()).toBe(policy.describe());
      expect([bound.id, bound.fingerprint]).toEqual([policy.id, policy.fingerprint]);
      expect(bound.checkTool('t', {}).decided_at_ms).toBe(1234);
      expect(events.emit).toHaveBeenCalledTimes(1);
      policy.checkTool('t', {});
      expect(events.emit).toHaveBeenCalledTimes(1);
    });

    it('keeps deps out of the fingerprint', () => {
      const spec = { agents: { allow: ['a'] } };
      const withEvents = RuntimePolicy.compile(spec, { events: { emit: () => true } });
      expect(withEvents.fingerprint).toBe(RuntimePolicy.compile(spec).fingerprint);
    });

    it('throws invalid_runtime_policy on a receiver that is not a compiled policy', () => {
      const { withDeps } = RuntimePolicy.compile({});
      expect(() => withDeps.call({})).toThrow(expect.objectContaining({ code: 'invalid_runtime_policy' }));
    });
  });
});
