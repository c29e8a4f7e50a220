import { RuntimeServiceError } from '../runtime-service.errors';

/**
 * Whether the generation that handed out a reference still runs. Every service, session call,
 * worker handle, lease and runner spec of a generation checks it, so once the generation stopped
 * they reject with `runtime_service_generation_stale` instead of reaching a stopped component.
 */
export class GenerationGuard {
  #stopped = false;

  constructor(readonly generation: number) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  stop(): void {
    this.#stopped = true;
  }

  /** Throws `runtime_service_generation_stale` once the generation stopped. */
  check(): void {
    if (this.#stopped) throw this.staleError();
  }

  staleError(): RuntimeServiceError {
    return new RuntimeServiceError('runtime_service_generation_stale', { generation: this.generation });
  }

  /** Runs `work` unless the generation stopped (a rejection with the stale error then). */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.check();
    return work();
  }
}
