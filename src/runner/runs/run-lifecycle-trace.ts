import type { Clock } from '../../shared/time/clock';
import type { TraceProducer } from '../../trace/trace-producer';
import type { RunStreamItem } from './run-registry.types';
import type { StoredRun } from './stores/run-store';

/** The lifecycle event types of a run (spec 06 §9). */
type RunLifecycleType = 'run_started' | 'run_paused' | 'run_resumed' | 'run_terminal';

/**
 * The run registry's lifecycle events in the trace store: `workflow_kind: 'agent_run'`, with both
 * `workflow_id` and `run_id` the run id, so a query by `run_id` returns a run's lifecycle and its
 * Runner's observability events together; `sequence` 1..n per run.
 */
export class RunLifecycleTrace {
  readonly #sequences = new Map<string, number>();

  constructor(
    private readonly producer: TraceProducer,
    private readonly clock: Clock,
  ) {}

  started(run: StoredRun): void {
    this.producer.begin();
    this.#deliver('run_started', run);
  }

  /** After an item was stored: a pause, a resume or the terminal item are lifecycle events. */
  appended(item: RunStreamItem, run: StoredRun): void {
    if (item.type === 'paused') this.#deliver('run_paused', run);
    else if (item.type === 'resumed') this.#deliver('run_resumed', run);
    else if (item.type === 'terminal') this.#deliver('run_terminal', run, item.status);
  }

  #deliver(type: RunLifecycleType, run: StoredRun, outcome?: string): void {
    const sequence = (this.#sequences.get(run.run_id) ?? 0) + 1;
    if (type === 'run_terminal') this.#sequences.delete(run.run_id);
    else this.#sequences.set(run.run_id, sequence);
    this.producer.deliver('workflow_lifecycle', {
      type,
      sequence,
      timestamp: this.clock.wallNow(),
      workflow_id: run.run_id,
      workflow_kind: 'agent_run',
      run_id: run.run_id,
      ...(run.invocation_id === null ? {} : { invocation_id: run.invocation_id }),
      ...(outcome === undefined ? {} : { outcome }),
    });
  }
}
