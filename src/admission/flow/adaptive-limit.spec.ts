import { applyReport, initialAdaptiveState } from './adaptive-limit';

const settings = { min: 2, backoffRatio: 0.5, decreaseIntervalMs: 1000 };

describe('AIMD (spec 09 §6, §8)', () => {
  it('starts at the static limit; overloaded halves it down to the floor, at most once per interval', () => {
    const state = initialAdaptiveState(10);
    applyReport(state, settings, 10, { outcome: 'overloaded' }, true, 0);
    expect(state.limit).toBe(5);
    applyReport(state, settings, 10, { outcome: 'overloaded' }, true, 999);
    expect(state.limit).toBe(5);
    applyReport(state, settings, 10, { outcome: 'overloaded' }, false, 1000);
    expect(state.limit).toBe(2);
    applyReport(state, settings, 10, { outcome: 'overloaded' }, true, 5000);
    expect(state.limit).toBe(2);
  });

  it('L saturated ok reports add one, up to the static limit; unsaturated ones do not count', () => {
    const state = initialAdaptiveState(4);
    applyReport(state, settings, 4, { outcome: 'overloaded' }, true, 0);
    expect(state.limit).toBe(2);
    applyReport(state, settings, 4, { outcome: 'ok' }, false, 1);
    applyReport(state, settings, 4, { outcome: 'ok' }, true, 2);
    expect(state.limit).toBe(2);
    applyReport(state, settings, 4, { outcome: 'ok', latencyMs: 5 }, true, 3);
    expect(state).toMatchObject({ limit: 3, okCount: 0 });
    for (let i = 0; i < 3; i++) applyReport(state, settings, 4, { outcome: 'ok' }, true, 4);
    expect(state.limit).toBe(4);
    for (let i = 0; i < 10; i++) applyReport(state, settings, 4, { outcome: 'ok' }, true, 5);
    expect(state.limit).toBe(4);
  });

  it('a decrease restarts the count of ok reports', () => {
    const state = initialAdaptiveState(8);
    applyReport(state, settings, 8, { outcome: 'overloaded' }, true, 0);
    applyReport(state, settings, 8, { outcome: 'ok' }, true, 1);
    expect(state.okCount).toBe(1);
    applyReport(state, settings, 8, { outcome: 'overloaded' }, true, 2000);
    expect(state).toMatchObject({ limit: 2, okCount: 0 });
  });
});
