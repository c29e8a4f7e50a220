import type { CatalogFunction, CatalogTrigger } from './schema-catalog.types';
import { compareTriggers, describeTriggerSpec, fingerprintFunction } from './trigger-comparison';
import type { TriggerSpec } from './table-spec';

const BODY = "\n  BEGIN\n    RAISE EXCEPTION 'append-only';\n  END\n";
const FINGERPRINT = fingerprintFunction('plpgsql', BODY);

const declared: TriggerSpec[] = [
  { name: 'things_no_change', timing: 'before', events: ['delete', 'update'], level: 'row', function: 'things_append_only', functionFingerprint: FINGERPRINT },
  { name: 'things_no_truncate', timing: 'before', events: ['truncate'], level: 'statement', function: 'things_append_only', functionFingerprint: FINGERPRINT },
];

// tgtype bits: 1 row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate
const trigger = (over: Partial<CatalogTrigger> = {}): CatalogTrigger => ({
  name: 'things_no_change',
  enabled: 'O',
  type: 1 + 2 + 8 + 16,
  functionSchema: 'public',
  functionName: 'things_append_only',
  hasCondition: false,
  columns: [],
  argumentCount: 0,
  ...over,
});
const truncateTrigger = (over: Partial<CatalogTrigger> = {}): CatalogTrigger => trigger({ name: 'things_no_truncate', type: 2 + 32, ...over });
const fn = (over: Partial<CatalogFunction> = {}): ReadonlyMap<string, CatalogFunction> =>
  new Map([['things_append_only', { name: 'things_append_only', language: 'plpgsql', body: BODY, returnsTrigger: true, ...over }]]);

const compare = (triggers: CatalogTrigger[], functions = fn()) => compareTriggers(declared, triggers, functions, 'public');

describe('compareTriggers', () => {
  it('finds nothing when every declared trigger exists, is enabled and calls its unaltered function', () => {
    expect(compare([trigger(), truncateTrigger()])).toEqual([]);
    expect(compare([trigger({ enabled: 'A' }), truncateTrigger({ enabled: 'A' })])).toEqual([]);
  });

  it('describes a trigger in one order of events, whatever order the spec lists them in', () => {
    expect(describeTriggerSpec(declared[0])).toBe('before update or delete for each row execute things_append_only()');
  });

  it('reports a missing trigger', () => {
    expect(compare([truncateTrigger()])).toEqual([
      { property: 'trigger:things_no_change', expected: 'before update or delete for each row execute things_append_only()', actual: 'missing' },
    ]);
  });

  it.each([
    ['D', 'disabled'],
    ['R', 'enabled on replicas only'],
  ])('reports a trigger in state %s as %s', (enabled, actual) => {
    expect(compare([trigger({ enabled }), truncateTrigger()])).toEqual([
      { property: 'trigger:things_no_change', expected: 'before update or delete for each row execute things_append_only()', actual },
    ]);
  });

  it.each([
    ['another function', { functionName: 'noop' }, 'before update or delete for each row execute noop()'],
    ['a function of another schema', { functionSchema: 'evil' }, 'before update or delete for each row execute evil.things_append_only()'],
    ['fewer events', { type: 1 + 2 + 16 }, 'before update for each row execute things_append_only()'],
    ['after instead of before', { type: 1 + 8 + 16 }, 'after update or delete for each row execute things_append_only()'],
    ['statement level', { type: 2 + 8 + 16 }, 'before update or delete for each statement execute things_append_only()'],
    ['a column list', { columns: ['lease'] }, 'before update or delete for each row execute things_append_only() of (lease)'],
    ['a WHEN condition', { hasCondition: true }, 'before update or delete for each row execute things_append_only() with a when condition'],
    ['arguments', { argumentCount: 2 }, 'before update or delete for each row execute things_append_only() with 2 arguments'],
    ['another definition, disabled', { functionName: 'noop', enabled: 'D' }, 'before update or delete for each row execute noop() (disabled)'],
  ])('reports a trigger with %s', (_what, over, actual) => {
    expect(compare([trigger(over), truncateTrigger()])).toEqual([
      { property: 'trigger:things_no_change', expected: 'before update or delete for each row execute things_append_only()', actual },
    ]);
  });

  it('reports an undeclared trigger, by name after the declared ones', () => {
    const extra = trigger({ name: 'a_rewrite', type: 1 + 2 + 4, functionName: 'rewrite' });
    expect(compare([trigger(), truncateTrigger(), extra])).toEqual([
      { property: 'trigger:a_rewrite', expected: 'absent', actual: 'before insert for each row execute rewrite()' },
    ]);
  });

  it('reports a function whose body or language changed once, after the triggers', () => {
    const expected = `fingerprint ${FINGERPRINT}`;
    expect(compare([trigger({ enabled: 'D' }), truncateTrigger()], fn({ body: '\nBEGIN RETURN NULL; END\n' }))).toEqual([
      { property: 'trigger:things_no_change', expected: 'before update or delete for each row execute things_append_only()', actual: 'disabled' },
      { property: 'function:things_append_only', expected, actual: `fingerprint ${fingerprintFunction('plpgsql', '\nBEGIN RETURN NULL; END\n')}` },
    ]);
    expect(compare([trigger(), truncateTrigger()], fn({ language: 'plperl' }))).toEqual([
      { property: 'function:things_append_only', expected, actual: `fingerprint ${fingerprintFunction('plperl', BODY)}` },
    ]);
    expect(compare([trigger(), truncateTrigger()], new Map())).toEqual([{ property: 'function:things_append_only', expected, actual: 'missing' }]);
    expect(compare([trigger(), truncateTrigger()], fn({ returnsTrigger: false }))).toEqual([
      { property: 'function:things_append_only', expected, actual: 'not a trigger function' },
    ]);
  });
});

describe('fingerprintFunction', () => {
  it('ignores indentation and line breaks outside quotes, and nothing else', () => {
    expect(fingerprintFunction('plpgsql', "BEGIN RAISE EXCEPTION 'append-only'; END")).toBe(FINGERPRINT);
    expect(fingerprintFunction('plpgsql', "BEGIN RAISE EXCEPTION 'append -only'; END")).not.toBe(FINGERPRINT);
    expect(fingerprintFunction('plpgsql', 'BEGIN RETURN OLD; END')).not.toBe(FINGERPRINT);
    expect(FINGERPRINT).toMatch(/^[0-9a-f]{64}$/);
  });
});
