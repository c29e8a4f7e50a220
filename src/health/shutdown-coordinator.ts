import { systemClock, type Clock } from '../shared/time/clock';
import { logField } from '../shared/text/log-escape';
import { within } from '../shared/time/timeout';

/**
 * The written shutdown order (conventions, "Health and shutdown"): readiness goes down and admission
 * stops accepting; the run registry cancels or pauses its runs; admission waits for the remaining
 * permits; then the service bundle and eval service, the ledger, the cluster instance (its lock,
 * which makes it live to the others), and finally the DataSource close.
 */
export const SHUTDOWN_PHASES = ['drain_begin', 'runs', 'admission_drain', 'services', 'ledger', 'cluster', 'database'] as const;

export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];

/** Counts a participant reports when its step runs out of time, e.g. `{active: 3}`. */
export type ShutdownCounts = Readonly<Record<string, number | boolean>>;

/** One component's step of the shutdown. */
export interface ShutdownParticipant {
  /** Configured name of the component, for the log (e.g. `admission`). */
  readonly component: string;
  readonly phase: ShutdownPhase;
  /** Does the step. `signal` aborts when the step's time is up; the shutdown has moved on by then. */
  run(signal: AbortSignal): void | Promise<void>;
  /** What is still outstanding, logged when the step times out. */
  counts?(): ShutdownCounts;
}

/** Where the coordinator writes: one line per step that timed out or failed. */
export interface ShutdownLog {
  log(message: string): void;
  warn(message: string): void;
}

/** Settings of a {@link ShutdownCoordinator}. */
export interface ShutdownSettings {
  /** Time for the whole shutdown, every step included; 0..600000. @default 30000 */
  timeoutMs?: number;
  /**
   * Time kept for each later phase that has participants, so a step that hangs cannot take the time
   * of the ones after it (the ledger and the DataSource still close); 0..60000. @default 1000
   */
  minimumStepMs?: number;
  /** @default systemClock */
  clock?: Clock;
  /** @default nothing is logged */
  logger?: ShutdownLog;
}

/** Where the coordinator is: serving, running a phase, or done. */
export type ShutdownState = 'serving' | 'shutting_down' | 'stopped';

/** How one participant's step ended. */
export interface ShutdownStepRecord {
  readonly phase: ShutdownPhase;
  readonly component: string;
  readonly outcome: 'done' | 'failed' | 'timed_out';
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
export const DEFAULT_MINIMUM_STEP_MS = 1000;

const silent: ShutdownLog = { log: () => {}, warn: () => {} };
const STEP_TIMED_OUT = Symbol('step timed out');

/**
 * Runs registered participants phase by phase in {@link SHUTDOWN_PHASES} order, the participants of
 * one phase together. Each phase is bounded on the clock; a participant that fails or runs out of
 * time is logged (with its counts, never error text) and the next phase runs.
 */
export class ShutdownCoordinator {
  private readonly participants: ShutdownParticipant[] = [];
  private readonly timeoutMs: number;
  private readonly minimumStepMs: number;
  private readonly clock: Clock;
  private readonly logger: ShutdownLog;
  private running: Promise<readonly ShutdownStepRecord[]> | null = null;
  private current: ShutdownPhase | null = null;
  private finished = false;

  constructor(settings: ShutdownSettings = {}) {
    this.timeoutMs = settings.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    this.minimumStepMs = settings.minimumStepMs ?? DEFAULT_MINIMUM_STEP_MS;
    this.clock = settings.clock ?? systemClock;
    this.logger = settings.logger ?? silent;
  }

  /** Adds a participant; the returned function removes it. Registering during the shutdown is too late for phases already run. */
  register(participant: ShutdownParticipant): () => void {
    this.participants.push(participant);
    return () => {
      const index = this.participants.indexOf(participant);
      if (index >= 0) this.participants.splice(index, 1);
    };
  }

  get state(): ShutdownState {
    return this.finished ? 'stopped' : this.running ? 'shutting_down' : 'serving';
  }

  /** The phase running now, the last one run once stopped, `null` while serving. */
  get phase(): ShutdownPhase | null {
    return this.current;
  }

  /** Runs the shutdown once (later calls get the same promise); resolves with how each step ended. */
  shutdown(): Promise<readonly ShutdownStepRecord[]> {
    this.running ??= this.runPhases();
    return this.running;
  }

  private async runPhases(): Promise<readonly ShutdownStepRecord[]> {
    const deadline = this.clock.monotonicNow() + this.timeoutMs;
    const records: ShutdownStepRecord[] = [];
    for (const [index, phase] of SHUTDOWN_PHASES.entries()) {
      const members = this.participants.filter((participant) => participant.phase === phase);
      if (members.length === 0) continue;
      this.current = phase;
      const later = SHUTDOWN_PHASES.slice(index + 1).filter((next) => this.participants.some((participant) => participant.phase === next)).length;
      const boundMs = Math.max(this.minimumStepMs, deadline - this.clock.monotonicNow() - later * this.minimumStepMs);
      records.push(...(await this.runPhase(phase, members, boundMs)));
    }
    this.finished = true;
    return Object.freeze(records);
  }

  private async runPhase(phase: ShutdownPhase, members: readonly ShutdownParticipant[], boundMs: number): Promise<ShutdownStepRecord[]> {
    const step = new AbortController();
    const ended: Array<ShutdownStepRecord | undefined> = members.map(() => undefined);
    const all = Promise.all(
      members.map(async (participant, index) => {
        let outcome: ShutdownStepRecord['outcome'] = 'done';
        try {
          await participant.run(step.signal);
        } catch {
          outcome = 'failed';
          // a step's own error text may carry anything: the log names the step only
          if (!step.signal.aborted) this.logger.warn(`shutdown step ${phase} of ${logField(participant.component)} failed; the next step runs`);
        }
        ended[index] = { phase, component: participant.component, outcome };
      }),
    );
    const timedOut = await within(all, boundMs, this.clock, () => STEP_TIMED_OUT).then(
      () => false,
      () => true,
    );
    if (timedOut) step.abort();
    return members.map((participant, index) => {
      const record = ended[index];
      if (record) return record;
      this.logger.warn(`shutdown step ${phase} of ${logField(participant.component)} did not finish within ${boundMs} ms${countsText(participant)}; the next step runs`);
      return { phase, component: participant.component, outcome: 'timed_out' };
    });
  }
}

function countsText(participant: ShutdownParticipant): string {
  let counts: ShutdownCounts | undefined;
  try {
    counts = participant.counts?.();
  } catch {
    return '';
  }
  const entries = Object.entries(counts ?? {}).filter(([, value]) => typeof value === 'number' || typeof value === 'boolean');
  return entries.length === 0 ? '' : ` (${entries.map(([key, value]) => `${logField(key).slice(1, -1)} ${String(value)}`).join(', ')})`;
}
