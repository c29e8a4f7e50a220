import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { canonicalJson, measure, measureContent } from './policy-json';
import { isPolicyDecision, verifyDecisionDigest } from './policy-decision';
import { RuntimePolicy } from './runtime-policy';
import { RuntimePolicyError } from './runtime-policy.errors';
import type { RuntimePolicySpec } from './runtime-policy-compiler';
import type { PolicyDecision } from './runtime-policy.types';
import { DECISION_KEYS } from './testing/decision-fixtures';

/** A fresh secret from letters that no id, digest, reason or key of these tests can contain. */
const CANARY_ALPHABET = 'GHJKMNPQRSTVWXYZ';
const CANARY = Array.from(randomBytes(24), (b) => CANARY_ALPHABET[b % CANARY_ALPHABET.length]).join('');
const WINDOW = 6;

/** True when `text` holds any 6-character piece of the canary. */
function leaksCanary(text: string): boolean {
  for (let i = 0; i + WINDOW <= CANARY.length; i++) if (text.includes(CANARY.slice(i, i + WINDOW))) return true;
  return false;
}

/** The reference of invariant 1: `JSON.stringify` with recursively sorted keys (UTF-16 order). */
function sortedStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : sortedStringify(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${sortedStringify(record[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The same value with every object's keys inserted in reverse and rotated order. */
function reinserted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reinserted);
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).reverse();
    keys.push(...keys.splice(0, 1));
    const copy: Record<string, unknown> = {};
    for (const key of keys) {
      Object.defineProperty(copy, key, { value: reinserted((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }
  return value;
}

/** Single code points, weighted towards the ones canonical JSON escapes or orders specially. */
const codePoint = fc.oneof(
  fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\u{10000}', '\u{1f600}', '\uffff', 'é', '1'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const json = fc.jsonValue({ maxDepth: 4, stringUnit: codePoint });
const keyArb = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '€', '😀', '1', '_', '\u0000'), maxLength: 4 });

// ---------------------------------------------------------------------------------------------
// Hostile values: every value carries the canary somewhere, never in a key.
// ---------------------------------------------------------------------------------------------

const HUGE = 'h'.repeat(2 * 2 ** 20) + CANARY;
const DEEP = (() => {
  let value: unknown = [CANARY];
  for (let i = 0; i < 50_000; i++) value = [value];
  return value;
})();

const hostileBuilders: Array<() => unknown> = [
  () => {
    const cyclic: Record<string, unknown> = { s: CANARY };
    cyclic.self = cyclic;
    return cyclic;
  },
  () => {
    const cyclic: unknown[] = [CANARY];
    cyclic.push([cyclic]);
    return cyclic;
  },
  () =>
    new Proxy({ s: CANARY }, {
      get: () => { throw new Error(CANARY); },
      ownKeys: () => { throw new Error(CANARY); },
      getPrototypeOf: () => { throw new Error(CANARY); },
    }),
  () => new Proxy([CANARY], {}),
  () => Object.defineProperty({ s: CANARY }, 'g', { enumerable: true, get: () => { throw new Error(CANARY); } }),
  () => Object.defineProperty({}, 'g', { enumerable: true, get: () => CANARY }),
  () => Object.defineProperty([CANARY], 0, { enumerable: true, get: () => { throw new Error(CANARY); } }),
  () => Object.defineProperty([1], 0, { enumerable: true, get: () => { throw new Proxy({}, { get: () => { throw new Error(CANARY); } }); } }),
  () => Object.defineProperty([1], 0, { enumerable: true, get: () => CANARY }),
  () => `${CANARY}\ud800`,
  () => `\udfff${CANARY}`,
  () => HUGE,
  () => DEEP,
  () => Buffer.from(CANARY),
  () => Buffer.concat([Buffer.from(CANARY), Buffer.from([0xff])]),
  () => new Map([[CANARY, CANARY]]),
  () => new Date(),
  () => Object(CANARY),
  () => Object.defineProperty(() => CANARY, 'name', { value: CANARY }),
  () => Symbol(CANARY),
  () => BigInt(CANARY.length),
  () => NaN,
  () => undefined,
  () => ({ toJSON: () => CANARY, s: CANARY }),
  () => Object.assign(Object.create(null) as object, { s: CANARY }),
  () => new (class Secretive { s = CANARY })(),
];

const hostileLeaf = fc.oneof(
  fc.constantFrom(...hostileBuilders).map((build) => build()),
  fc.constant(CANARY),
  fc.string({ maxLength: 8 }).map((s) => `${s}${CANARY}`),
  json,
);

const { hostile } = fc.letrec((tie) => ({
  hostile: fc.oneof({ depthSize: 'small' }, hostileLeaf, tie('array'), tie('object')),
  array: fc.array(tie('hostile'), { maxLength: 4 }),
  object: fc.dictionary(keyArb, tie('hostile'), { maxKeys: 4 }),
}));

/** A hostile value that certainly holds the canary in at least one value position. */
const withCanary = fc.tuple(hostile, fc.nat(2)).map(([value, shape]) =>
  shape === 0 ? value : shape === 1 ? [value, CANARY] : { a: value, s: CANARY },
);

const NAMES = ['search', 'fetch', 'rm', 'shell', 'support', 'billing', 'model_output'];
const subjectArb = fc.oneof(
  fc.constantFrom(...NAMES),
  fc.string({ unit: fc.constantFrom('a', 'b', 'é'), minLength: 1, maxLength: 5 }),
  fc.constantFrom('', '\ud800', 'x'.repeat(257), 1, null, undefined, Object('search')),
);

const policySpecArb: fc.Arbitrary<RuntimePolicySpec> = fc.record({
  agents: fc.record({ allow: fc.subarray(NAMES), deny: fc.subarray(NAMES) }),
  tools: fc.record({ allow: fc.oneof(fc.subarray(NAMES), fc.constant('all' as const)), deny: fc.subarray(NAMES) }),
  maxArgumentBytes: fc.oneof(fc.nat(64), fc.constant(65_536)),
  maxContentBytes: fc.oneof(fc.nat(64), fc.constant(1_048_576)),
});

describe('§10 invariants (fast-check)', () => {
  it('1. canonicalJson equals JSON.stringify with recursively sorted keys, ignores insertion order and is idempotent', () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(sortedStringify(value));
        expect(canonicalJson(reinserted(value))).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('1. canonicalJson of strings with any code units either matches JSON.stringify or reports invalid_utf8', () => {
    const units = fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u2028', '\ud800', '\udc00', '😀', 'é'), maxLength: 12 });
    fc.assert(
      fc.property(units, (s) => {
        if (s.isWellFormed()) expect(canonicalJson(s)).toBe(JSON.stringify(s));
        else expect(() => canonicalJson(s)).toThrow(expect.objectContaining({ code: 'invalid_utf8' }));
      }),
      { numRuns: 300 },
    );
  });

  it('2. measure is within exactly when the canonical byte length fits the limit; otherwise limit < bytes ≤ length', () => {
    fc.assert(
      fc.property(json, fc.double({ min: 0, max: 1.5, noNaN: true }), (value, fraction) => {
        const size = Buffer.byteLength(canonicalJson(value), 'utf8');
        const limit = Math.floor(size * fraction);
        const result = measure(value, limit);
        if (size <= limit) expect(result).toEqual({ exceeded: false, bytes: size });
        else {
          expect(result.exceeded).toBe(true);
          expect(result.bytes).toBeGreaterThan(limit);
          expect(result.bytes).toBeLessThanOrEqual(size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('2. within the limit, measureContent of a string equals Buffer.byteLength', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.nat(200), (s, limit) => {
        const result = measureContent(s, limit);
        const bytes = Buffer.byteLength(s, 'utf8');
        if (!result.exceeded) expect(result.bytes).toBe(bytes);
        expect(result.exceeded).toBe(bytes > limit);
      }),
      { numRuns: 300 },
    );
  });

  it('3. the fingerprint ignores id, selector order and duplicates', () => {
    const names = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 6 });
    fc.assert(
      fc.property(names, names, fc.string({ minLength: 1, maxLength: 20 }), fc.nat(), (allow, deny, id, seed) => {
        const shuffled = (list: string[]) => [...list, ...list.slice(0, seed % (list.length + 1))].sort(() => (seed++ % 3) - 1);
        const a = RuntimePolicy.compile({ tools: { allow, deny } });
        const b = RuntimePolicy.compile({ id, tools: { allow: shuffled(allow), deny: shuffled(deny) } });
        expect(b.fingerprint).toBe(a.fingerprint);
      }),
      { numRuns: 200 },
    );
  });

  it('3. the fingerprint changes with any limit or selector membership change', () => {
    fc.assert(
      fc.property(policySpecArb, fc.nat(4), fc.string({ minLength: 1, maxLength: 8 }), (spec, which, extra) => {
        const name = `${extra}-new`;
        const changed: RuntimePolicySpec = [
          { ...spec, maxArgumentBytes: (spec.maxArgumentBytes ?? 0) + 1 },
          { ...spec, maxContentBytes: (spec.maxContentBytes ?? 0) + 1 },
          { ...spec, agents: { ...spec.agents, allow: [...(spec.agents?.allow as string[]), name] } },
          { ...spec, agents: { ...spec.agents, deny: [...(spec.agents?.deny as string[]), name] } },
          { ...spec, tools: { ...spec.tools, deny: [...(spec.tools?.deny as string[]), name] } },
        ][which];
        expect(RuntimePolicy.compile(changed).fingerprint).not.toBe(RuntimePolicy.compile(spec).fingerprint);
      }),
      { numRuns: 200 },
    );
  });

  describe('4. decisions, telemetry, errors and console output never carry the canary', () => {
    const consoleLines: string[] = [];
    const spies: jest.SpyInstance[] = [];

    beforeAll(() => {
      for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
        spies.push(jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
          consoleLines.push(args.map((arg) => (typeof arg === 'string' ? arg : String(arg))).join(' '));
        }));
      }
    });

    afterAll(() => {
      for (const spy of spies) spy.mockRestore();
      expect(consoleLines.filter(leaksCanary)).toEqual([]);
    });

    it('checks never throw, and every decision has the §5 keys, a verifying digest and increasing ids', () => {
      let lastId = '';
      fc.assert(
        fc.property(policySpecArb, fc.constantFrom('agent', 'tool', 'undeclared_tool', 'content'), subjectArb, withCanary, (spec, method, subject, value) => {
          const payloads: string[] = [];
          const policy = RuntimePolicy.compile(spec, { events: { emit: (_: string, payload: object) => payloads.push(JSON.stringify(payload)) } });
          let decision: PolicyDecision;
          if (method === 'agent') decision = policy.checkAgent(subject, value);
          else if (method === 'tool') decision = policy.checkTool(subject, value);
          else if (method === 'undeclared_tool') decision = policy.checkUndeclaredTool(subject, value);
          else decision = policy.checkContent(subject, value);
          // an undeclared name is never a subject: the marker, or '<invalid>' for what is no name
          if (method === 'undeclared_tool') expect(['unknown_tool', '<invalid>']).toContain(decision.subject);
          else expect(decision.subject_digest).toBeNull();

          expect(Reflect.ownKeys(decision).sort()).toEqual(DECISION_KEYS);
          expect(isPolicyDecision(decision)).toBe(true);
          expect(verifyDecisionDigest(decision)).toBe(true);
          expect(JSON.parse(JSON.stringify(decision))).toStrictEqual(decision);
          expect(decision.decision_id > lastId).toBe(true);
          lastId = decision.decision_id;
          expect(leaksCanary(JSON.stringify(decision))).toBe(false);
          expect(payloads).toHaveLength(1);
          expect(leaksCanary(payloads[0])).toBe(false);
        }),
        { numRuns: 400 },
      );
    });

    it('a denied subject’s value is never read: getter and Proxy-trap counters stay 0', () => {
      fc.assert(
        fc.property(policySpecArb, fc.constantFrom('agent', 'tool'), subjectArb, json, (spec, method, subject, inner) => {
          const policy = RuntimePolicy.compile(spec);
          let reads = 0;
          const trap = () => { reads++; throw new Error(CANARY); };
          const handler = new Proxy({}, { get: () => trap });
          const value = [new Proxy({ inner }, handler), Object.defineProperty({ inner }, 'g', { enumerable: true, get: trap })];
          Object.defineProperty(value, 2, { enumerable: true, get: trap });
          const decision = method === 'agent' ? policy.checkAgent(subject, value) : policy.checkTool(subject, value);
          const deniedBeforeBudget = ['not_allowed', 'explicitly_denied', 'invalid_subject'].includes(decision.reason);
          if (deniedBeforeBudget) expect(reads).toBe(0);
          else expect(['invalid_arguments', 'invalid_content', 'policy_evaluation_failed', 'argument_budget_exceeded', 'content_budget_exceeded']).toContain(decision.reason);
        }),
        { numRuns: 300 },
      );
    });

    it('canonicalJson, measure and measureContent throw only RuntimePolicyErrors without the canary, or the user’s own exception', () => {
      fc.assert(
        fc.property(withCanary, fc.nat(100_000), (value, limit) => {
          for (const run of [() => canonicalJson(value), () => measure(value, limit), () => measureContent(value, limit)]) {
            try {
              run();
            } catch (error) {
              if (RuntimePolicyError.isRuntimePolicyError(error)) {
                expect(leaksCanary(error.message)).toBe(false);
                expect(leaksCanary(JSON.stringify(error.details ?? {}))).toBe(false);
                expect(['unsupported_json_term', 'invalid_utf8']).toContain(error.code);
              } else {
                // only what a hostile getter threw passes through, never an error of ours
                expect(error instanceof RuntimePolicyError).toBe(false);
              }
            }
          }
        }),
        { numRuns: 300 },
      );
    });

    it('compile errors never carry the canary, whatever the spec holds', () => {
      const badSpec = fc.oneof(
        withCanary,
        withCanary.map((value) => ({ id: value })),
        withCanary.map((value) => ({ tools: { allow: [CANARY, value] } })),
        withCanary.map((value) => ({ agents: { deny: value } })),
        withCanary.map((value) => ({ maxArgumentBytes: value })),
        fc.constant({ [CANARY]: 1 }),
        fc.constant({ tools: { [CANARY]: [] } }),
        fc.constant({ id: `${CANARY}\ud800` }),
      );
      fc.assert(
        fc.property(badSpec, (spec) => {
          try {
            RuntimePolicy.compile(spec as RuntimePolicySpec);
          } catch (error) {
            expect(RuntimePolicyError.isRuntimePolicyError(error)).toBe(true);
            expect(leaksCanary((error as RuntimePolicyError).message)).toBe(false);
            expect(leaksCanary(JSON.stringify((error as RuntimePolicyError).details ?? {}))).toBe(false);
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
