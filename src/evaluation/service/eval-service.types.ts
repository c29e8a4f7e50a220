import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import type { Clock } from '../../shared/time/clock';
import type { EvalStore } from '../eval.types';
import type { EvalRunnerRegistry } from '../executor/local-eval-executor';

/** Lifecycle of a service (spec 05 §3): `stopped` is final after `stop()`; after a fault, `restart()` begins a new generation. */
export type EvalServiceState = 'created' | 'starting' | 'standby' | 'running' | 'stopped';

/** What an {@link EvalService} is built on. */
export interface EvalServiceDeps {
  /** The store it owns (a `PostgresEvalStore`, or a wrapper delegating to one). */
  readonly store: EvalStore;
  /** The runners jobs name (`RunRegistry`); needed by the `'local'` worker and for `unknown_eval_agent`. */
  readonly registry?: EvalRunnerRegistry;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Telemetry sink (`EventEmitter2` fits). @default none */
  readonly events?: TelemetrySink;
  /** The preparation worker script. @default the package's compiled worker */
  readonly preparationWorkerFile?: string;
  /** Where a stop on a fault is reported, one content-free line (Nest's `Logger` fits). @default none */
  readonly logger?: EvalServiceLogger;
  /**
   * Told once per stop on a fault (spec 05 §6.1) with its reason, after the generation released its
   * lock; `EvaluationModule` schedules `restart()` here. A throw is ignored. @default none
   */
  readonly onFaultStop?: (reason: string) => void;
}

/** A sink for the service's one line about a stop on a fault. */
export interface EvalServiceLogger {
  error(message: string): void;
}
