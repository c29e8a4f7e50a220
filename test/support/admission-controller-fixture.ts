import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionError } from '../../src/admission/admission.errors';
import type { AdmissionService } from '../../src/admission/admission-service';
import { thrown as thrownBy } from '../../src/shared/testing/thrown';
import type { AdmissionDecisionEvent, AdmissionOutcome, SubmitResult } from '../../src/admission/admission.types';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import type { TelemetrySink } from '../../src/telemetry/telemetry-sink';
import { ADMISSION_VARIANTS, useAdmissionVariant, type AdmissionVariant, type AdmissionVariantName } from './admission-variants';

export { ADMISSION_VARIANTS, type AdmissionVariantName };

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

/** One telemetry event as the sink received it. */
export interface RecordedEvent {
  readonly name: string;
  readonly payload: AdmissionDecisionEvent;
}

/** A started controller of one variant on a manual clock, with its telemetry collected. */
export interface AdmissionFixture {
  readonly controller: AdmissionService;
  readonly clock: ManualClock;
  /** Payloads in delivery order (the array may be emptied by a test). */
  readonly events: AdmissionDecisionEvent[];
  readonly recorded: RecordedEvent[];
  /** Called with every payload, after it was recorded, inside the sink. */
  readonly listeners: Array<(event: AdmissionDecisionEvent) => void>;
  outcomes(): AdmissionOutcome[];
  /** Waits until every effect of what the test did has been delivered (see `VariantController.settle`). */
  settle(): Promise<void>;
  /** Whether `promise` has settled once the controller settled. */
  stateOf(promise: Promise<unknown>): Promise<'pending' | 'fulfilled' | 'rejected'>;
  /** Timers pending on the clock beyond those the started controller keeps for itself (none for the local one). */
  timers(): number;
  close(): Promise<void>;
}

/** What a suite body gets for one variant. */
export interface AdmissionSuite {
  readonly variant: AdmissionVariant;
  /**
   * A started controller of the variant; closed after the test. Its telemetry goes to `sink` when
   * one is given (then `events` stays empty), else it is recorded.
   */
  setup(config?: AdmissionConfig, clock?: ManualClock, sink?: TelemetrySink): Promise<AdmissionFixture>;
  /** `it` for the local variant; registers nothing for the others. For tests of process-local synchronous behaviour only. */
  readonly localOnly: jest.It;
}

/**
 * Registers the variant's hooks in the enclosing block and returns its `setup`. Suites run their
 * body once per variant: `describe.each(ADMISSION_VARIANTS)('%s controller', (name) => { const {setup} = admissionSuite(name); … })`.
 */
export function admissionSuite(name: AdmissionVariantName): AdmissionSuite {
  const variant = useAdmissionVariant(name);
  return {
    variant,
    // a test of process-local behaviour is not registered for the cluster variant at all (never a skipped test)
    localOnly: name === 'local' ? it : (notRegistered as unknown as jest.It),
    async setup(config?: AdmissionConfig, clock: ManualClock = new ManualClock(), sink?: TelemetrySink) {
      const events: AdmissionDecisionEvent[] = [];
      const recorded: RecordedEvent[] = [];
      const listeners: Array<(event: AdmissionDecisionEvent) => void> = [];
      const emit = (eventName: string, raw: object) => {
        const payload = raw as AdmissionDecisionEvent;
        events.push(payload);
        recorded.push({ name: eventName, payload });
        listeners.forEach((listener) => listener(payload));
      };
      const built = await variant.create(config, { clock, events: sink ?? { emit } });
      const settle = () => built.settle();
      const ownTimers = clock.pendingTimers;
      return {
        controller: built.controller,
        clock,
        events,
        recorded,
        listeners,
        outcomes: () => events.map((event) => event.outcome),
        settle,
        stateOf: async (promise: Promise<unknown>) => {
          let state: 'pending' | 'fulfilled' | 'rejected' = 'pending';
          promise.then(
            () => (state = 'fulfilled'),
            () => (state = 'rejected'),
          );
          await settle();
          return state;
        },
        timers: () => clock.pendingTimers - ownTimers,
        close: () => built.close(),
      };
    },
  };
}

/** The `AdmissionError` `fn` throws synchronously. */
export const thrown = (fn: () => unknown): AdmissionError => thrownBy<AdmissionError>(fn);

/**
 * What `fn` throws or what the promise it returns rejects with: the refusal of a `submit`, which
 * the local controller throws and the cluster controller rejects with. Fails when it succeeds.
 */
export async function refusal<E = AdmissionError>(fn: () => unknown): Promise<E> {
  try {
    await fn();
  } catch (error) {
    return error as E;
  }
  throw new Error('expected a refusal');
}

/** The permit of a granted submit result. */
export const granted = (result: SubmitResult): Permit => {
  if (result.status !== 'granted') throw new Error('expected a grant');
  return result.permit;
};

/** Registers nothing: what `localOnly` is for the cluster variant. */
function notRegistered(): void {}
