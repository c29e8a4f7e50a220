import { inspect } from 'node:util';
import { InMemorySessionService } from '../sessions/in-memory-session-service';
import type { SessionService } from '../../runner/session.types';
import { systemClock, type Clock } from '../../shared/time/clock';
import { exponentialBackoff } from '../../shared/time/retry';
import type { CompiledServiceProfile, RuntimeServiceProfile } from '../profile/service-profile';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { GenerationRunnerSpec, GenerationServices, ServiceGeneration } from './service-generation';

/**
 * First pause before a new generation after a fault; it doubles with each further fault up to
 * {@link MAX_RESTART_DELAY_MS} (00-conventions "Health and shutdown", which overrides spec 07 §5's
 * 100 ms → 5 s and its `failed` after 5 faults in 10 s: a database blink never stops the bundle for good).
 */
export const FIRST_RESTART_DELAY_MS = 1000;
export const MAX_RESTART_DELAY_MS = 30_000;
/** A generation that ran this long before its fault counts as stable: the next pause starts again at {@link FIRST_RESTART_DELAY_MS}. */
export const STABLE_RUN_MS = MAX_RESTART_DELAY_MS;

/** Lifecycle of the supervisor; `failed` only when the first start failed (the app does not start). */
export type SupervisorState = 'created' | 'starting' | 'running' | 'restarting' | 'failed' | 'stopped' | 'disabled';

/** The runner spec of the `disabled` profile: sessions in memory, no bundle. */
export interface DisabledRunnerSpec {
  readonly profile: 'disabled';
  readonly runnerOptions: { readonly sessionService: SessionService };
}

/** Builds generation `n` of the profile (new objects every time). */
export type GenerationFactory = (generation: number, onFault: (reason: string, details: Readonly<Record<string, string>>) => void) => ServiceGeneration;

/**
 * The one supervisor of a `RuntimeServicesModule` (spec 07 §5): it runs one generation at a time,
 * and after a fault starts a new one (generation + 1, new objects) after 1 s, doubling with each
 * further fault (a generation that cannot start is one) up to 30 s, for as long as it takes: the
 * bundle comes back by itself once its database does. The pause starts again at 1 s after a
 * generation that ran {@link STABLE_RUN_MS}. It never falls back to an in-memory service. `onGeneration` tells the app each generation that reaches `running`, so it
 * can rebuild its Runners from the new spec.
 */
export class RuntimeServiceSupervisor {
  #state: SupervisorState;
  #current: ServiceGeneration | null = null;
  #number = 0;
  /** Faults since the last stable generation: the exponent of the next pause. */
  #streak = 0;
  #runningSince = 0;
  #timer: unknown = undefined;
  #firstStart: Promise<void> | null = null;
  readonly #listeners = new Set<(generation: ServiceGeneration) => void>();
  readonly #clock: Clock;
  readonly #disabledSpec: DisabledRunnerSpec;

  constructor(
    private readonly compiled: CompiledServiceProfile,
    private readonly build: GenerationFactory,
    deps: { readonly clock?: Clock } = {},
  ) {
    this.#clock = deps.clock ?? systemClock;
    this.#state = compiled.profile === 'disabled' ? 'disabled' : 'created';
    this.#disabledSpec = Object.freeze({ profile: 'disabled', runnerOptions: Object.freeze({ sessionService: new InMemorySessionService() }) });
  }

  get profile(): RuntimeServiceProfile {
    return this.compiled.profile;
  }

  get state(): SupervisorState {
    return this.#state;
  }

  /** Starts the first generation (once; later calls wait for the same start); its failure rejects (the app does not start). */
  start(): Promise<void> {
    if (this.#state === 'created') {
      this.#state = 'starting';
      this.#firstStart = this.#startGeneration().catch((error: unknown) => {
        this.#state = 'failed';
        throw error;
      });
    }
    // a second caller (a Runner factory that needs the spec before the module's init) waits for the same start
    return this.#firstStart ?? Promise.resolve();
  }

  /** The running generation; `runtime_service_bundle_unavailable` when none runs. */
  current(): ServiceGeneration {
    const current = this.#current;
    if (current === null || current.state !== 'running') throw new RuntimeServiceError('runtime_service_bundle_unavailable', { state: this.#state });
    return current;
  }

  /** The running generation's services (synchronous). */
  services(): GenerationServices {
    return this.current().services();
  }

  /** The Runner options of the running generation; `runtime_service_profile_mismatch` when `expectedProfile` differs. */
  runnerSpec(expectedProfile?: RuntimeServiceProfile): GenerationRunnerSpec | DisabledRunnerSpec {
    if (expectedProfile !== undefined && expectedProfile !== this.compiled.profile) {
      throw new RuntimeServiceError('runtime_service_profile_mismatch', { expected: expectedProfile, actual: this.compiled.profile });
    }
    if (this.compiled.profile === 'disabled') return this.#disabledSpec;
    return this.current().runnerSpec();
  }

  /** Calls `listener` for every generation that reaches `running` (also the current one, at once); returns the unsubscribe. */
  onGeneration(listener: (generation: ServiceGeneration) => void): () => void {
    this.#listeners.add(listener);
    if (this.#current?.state === 'running') this.#tell(listener, this.#current);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Stops the current generation and starts a new one at once (also out of `failed`). Its start
   * failure rejects, and the supervisor goes on restarting with the backoff as after a fault.
   */
  async restart(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'disabled') return;
    this.#clearTimer();
    this.#streak = 0;
    this.#state = 'restarting';
    await this.#current?.stop();
    try {
      await this.#startGeneration();
    } catch (error) {
      if (this.#current !== null) this.#onFault(this.#current);
      throw error;
    }
  }

  /** Stops the current generation and the supervisor for good. */
  async stop(): Promise<void> {
    if (this.#state === 'disabled') return;
    this.#state = 'stopped';
    this.#clearTimer();
    await this.#current?.stop();
  }

  /** The running generation's status record, or the supervisor's state when none runs. */
  status(): Readonly<Record<string, unknown>> {
    const current = this.#current;
    if (current !== null && current.state === 'running') return current.status();
    return Object.freeze({ schema_version: 1, status: this.#state, profile: this.compiled.profile, generation: this.#number });
  }

  toJSON(): Readonly<Record<string, unknown>> {
    return this.status();
  }

  [inspect.custom](): string {
    return `RuntimeServiceSupervisor ${inspect(this.status())}`;
  }

  async #startGeneration(): Promise<void> {
    this.#number += 1;
    const generation = this.build(this.#number, () => this.#onFault(generation));
    this.#current = generation;
    await generation.start();
    if (this.#state === 'stopped') {
      await generation.stop();
      return;
    }
    this.#state = 'running';
    this.#runningSince = this.#clock.monotonicNow();
    for (const listener of this.#listeners) this.#tell(listener, generation);
  }

  #onFault(generation: ServiceGeneration): void {
    if (generation !== this.#current || this.#state === 'stopped') return;
    const wasRunning = this.#state === 'running';
    if (wasRunning && this.#clock.monotonicNow() - this.#runningSince >= STABLE_RUN_MS) this.#streak = 0;
    this.#streak += 1;
    this.#state = 'restarting';
    this.#clearTimer();
    const delay = exponentialBackoff(FIRST_RESTART_DELAY_MS, MAX_RESTART_DELAY_MS)(this.#streak);
    this.#timer = this.#clock.setTimer(() => void this.#restartAfterFault(), delay);
  }

  async #restartAfterFault(): Promise<void> {
    this.#timer = undefined;
    if (this.#state !== 'restarting') return;
    try {
      await this.#startGeneration();
    } catch {
      // a generation that cannot start counts as one more fault
      if (this.#current !== null) this.#onFault(this.#current);
    }
  }

  #tell(listener: (generation: ServiceGeneration) => void, generation: ServiceGeneration): void {
    try {
      listener(generation);
    } catch {
      // a throwing listener is the application's problem, never the supervisor's
    }
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }
}
