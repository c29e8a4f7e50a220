import { AdmissionError } from './admission.errors';
import { isProviderOverloadError, ModelCallReports } from './model-call-reports';
import type { Permit, WorkReport } from './permit';

/** A retry error whose last error is itself, without an overload status. */
function selfRetried(): object {
  const error: Record<string, unknown> = { statusCode: 400 };
  error.lastError = error;
  return error;
}

describe('ModelCallReports and isProviderOverloadError', () => {
  function reporter() {
    const reports: WorkReport[] = [];
    const model = new ModelCallReports();
    model.attach({ report: (report: WorkReport) => void reports.push(report) } as unknown as Permit);
    return { reports, model };
  }

  it('reports the first overloaded call at once and nothing after it', () => {
    const { reports, model } = reporter();
    model.modelCallEnded(10, false);
    model.modelCallEnded(20, true);
    model.modelCallEnded(30, true);
    model.finish();
    expect(reports).toEqual([{ outcome: 'overloaded', latencyMs: 20 }]);
  });

  it('reports the final ok at finish, and nothing without a model call', () => {
    const { reports, model } = reporter();
    model.finish();
    expect(reports).toEqual([]);
    model.modelCallEnded(5, false);
    model.modelCallEnded(-3, false);
    model.finish();
    model.finish();
    expect(reports).toEqual([{ outcome: 'ok', latencyMs: 0 }]);
  });

  it('a refused report (reported already by the application) is ignored', () => {
    const model = new ModelCallReports();
    model.attach({ report: () => { throw new AdmissionError('invalid_report'); } } as unknown as Permit);
    model.modelCallEnded(1, false);
    expect(() => model.finish()).not.toThrow();
  });

  it.each([
    [Object.assign(new Error('x'), { statusCode: 429 }), true],
    [Object.assign(new Error('x'), { status: 503 }), true],
    [Object.assign(new Error('retry'), { lastError: { statusCode: 429 } }), true],
    [Object.assign(new Error('x'), { statusCode: 400 }), false],
    ['429', false],
    [selfRetried(), false],
    [{ status: '429' }, false],
    [null, false],
  ])('%p overloaded: %p', (error, expected) => {
    expect(isProviderOverloadError(error)).toBe(expected);
  });
});
