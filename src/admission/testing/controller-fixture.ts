import { AdmissionController } from '../admission-controller';
import type { AdmissionConfig } from '../admission-config';
import type { AdmissionError } from '../admission.errors';
import { thrown as thrownBy } from '../../shared/testing/thrown';
import type { AdmissionDecisionEvent, SubmitResult } from '../admission.types';
import type { Permit } from '../permit';
import { ManualClock } from '../../testing/manual-clock';

/** A clock whose timers never fire: time moves, only the purges notice it. */
export class TimerlessClock extends ManualClock {
  override setTimer(): unknown {
    return {};
  }
}

/** A clock that fires every timer after half its delay. */
export class EarlyClock extends ManualClock {
  override setTimer(fn: () => void, ms: number): unknown {
    return super.setTimer(fn, ms / 2);
  }
}

/** A controller on a manual clock, with its telemetry collected. */
export function setup(config: AdmissionConfig = {}, clock: ManualClock = new ManualClock()) {
  const events: AdmissionDecisionEvent[] = [];
  const controller = new AdmissionController(config, { clock, events: { emit: (_, payload) => events.push(payload as AdmissionDecisionEvent) } });
  return { clock, controller, events, outcomes: () => events.map((event) => event.outcome) };
}

/** The `AdmissionError` `fn` throws synchronously. */
export const thrown = (fn: () => unknown): AdmissionError => thrownBy<AdmissionError>(fn);

/** The permit of a granted submit result. */
export const granted = (result: SubmitResult): Permit => {
  if (result.status !== 'granted') throw new Error('expected a grant');
  return result.permit;
};

/** Whether `promise` has settled, after letting pending callbacks run. */
export async function stateOf(promise: Promise<unknown>): Promise<'pending' | 'fulfilled' | 'rejected'> {
  let state: 'pending' | 'fulfilled' | 'rejected' = 'pending';
  promise.then(
    () => (state = 'fulfilled'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
}
