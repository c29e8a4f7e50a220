import { AdmissionController } from '../../src/admission/admission-controller';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return error instanceof AdmissionError ? error.code : 'foreign';
  }
  return undefined;
};

describe('permit.settle and permit.report (spec 09 §8)', () => {
  let permit: Permit;
  const controller = new AdmissionController({ adaptive: { a: { min: 1 } } });
  beforeEach(async () => {
    permit = await controller.acquire('a');
  });
  afterEach(() => controller.release(permit));

  it('settle: synchronous, undefined, once; a refused call does not use up the one allowed', () => {
    for (const bad of [-1, NaN, Infinity, '3', null, undefined]) expect(codeOf(() => permit.settle(bad as number))).toBe('invalid_settle');
    expect(permit.settle(0)).toBeUndefined();
    expect(codeOf(() => permit.settle(1))).toBe('invalid_settle');
  });

  it('report: synchronous, undefined, once; bad outcomes, latencies and hostile objects are refused', () => {
    let read = false;
    const getter = { get outcome() { read = true; return 'ok'; } };
    for (const bad of [null, 'ok', {}, { outcome: 'fine' }, { outcome: 'ok', latencyMs: -1 }, { outcome: 'ok', latencyMs: NaN }, getter, new Proxy({ outcome: 'ok' }, {})]) {
      expect(codeOf(() => permit.report(bad as never))).toBe('invalid_report');
    }
    expect(read).toBe(false);
    expect(permit.report({ outcome: 'overloaded', latencyMs: 12.5 })).toBeUndefined();
    expect(codeOf(() => permit.report({ outcome: 'ok' }))).toBe('invalid_report');
  });

  it('both are allowed after the permit was revoked, and refuse a receiver that is not an issued permit', () => {
    controller.release(permit);
    expect(permit.settle(3)).toBeUndefined();
    expect(permit.report({ outcome: 'ok' })).toBeUndefined();
    const copy = Object.create(Object.getPrototypeOf(permit)) as Permit;
    expect(codeOf(() => copy.settle(1))).toBe('invalid_settle');
    expect(codeOf(() => permit.report.call({}, { outcome: 'ok' }))).toBe('invalid_report');
    expect(codeOf(() => permit.settle.call(undefined as never, 1))).toBe('invalid_settle');
  });
});
