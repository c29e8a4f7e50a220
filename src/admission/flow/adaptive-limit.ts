import type { ResolvedAdaptive } from './flow-config';

/** What a permit's work reports (spec 09 §6): how it went, and optionally how long it took. */
export interface WorkReport {
  /** `overloaded` when the provider refused or slowed down (a 429, a 503): it lowers an adaptive agent's limit. */
  readonly outcome: 'ok' | 'overloaded';
  /** Finite ≥ 0; informative only (the AIMD rule of spec 09 does not use it). */
  readonly latencyMs?: number;
}

/**
 * The AIMD state of one adaptive agent, as plain numbers so a cluster decision can store it: the
 * effective limit, the saturated `ok` reports counted toward the next increase, and the time of the
 * last decrease (monotonic ms on the deciding clock; `-Infinity` before the first).
 */
export interface AdaptiveState {
  limit: number;
  okCount: number;
  lastDecreaseAt: number;
}

/** The state of an adaptive agent before any report: its static limit. */
export function initialAdaptiveState(staticLimit: number): AdaptiveState {
  return { limit: staticLimit, okCount: 0, lastDecreaseAt: -Infinity };
}

/**
 * Applies one report (spec 09 §6, §8). `saturated`: the agent held at least the `L` in force then when
 * the reported permit was granted. An `overloaded` report lowers `L` to `max(min, floor(L × ratio))`
 * at most once per `decreaseIntervalMs`; `L` saturated `ok` reports raise it by 1, up to `staticLimit`.
 */
export function applyReport(state: AdaptiveState, settings: ResolvedAdaptive, staticLimit: number, report: WorkReport, saturated: boolean, now: number): void {
  if (report.outcome === 'overloaded') {
    if (now - state.lastDecreaseAt < settings.decreaseIntervalMs) return;
    state.limit = Math.max(settings.min, Math.floor(state.limit * settings.backoffRatio));
    state.lastDecreaseAt = now;
    state.okCount = 0;
    return;
  }
  if (!saturated || state.limit >= staticLimit) return;
  state.okCount++;
  if (state.okCount >= state.limit) {
    state.limit++;
    state.okCount = 0;
  }
}
