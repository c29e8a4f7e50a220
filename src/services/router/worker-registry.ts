import { LinkedList } from '../../shared/collections/linked-list';
import { ScopeCreation } from './scope-creation';
import { ScopeWorker } from './scope-worker';

/** What bounds a registry. */
export interface RegistryLimits {
  /** Installed workers plus reserved slots. */
  readonly capacity: number;
  /** Idle reclamation allowed (`exact_scope` over a durable adapter). */
  readonly reclaim: boolean;
  readonly idleScopeTimeoutMs: number;
}

/**
 * The routing map of one router: installed workers by key, creations in progress (each a reserved
 * slot), and the least-recent-access order that reclamation walks. `activeScopes` is derived from
 * both maps, so it can never disagree with them.
 */
export class WorkerRegistry<S> {
  private readonly installed = new Map<string, ScopeWorker<S>>();
  private readonly creations = new Map<string, ScopeCreation<S>>();
  /** Installed workers, least recently accessed first (`lastAccess` never decreases along it). */
  private readonly recency = new LinkedList<ScopeWorker<S>>();
  private incarnations = 0;
  idleEvictions = 0;

  constructor(private readonly limits: RegistryLimits) {}

  get activeScopes(): number {
    return this.installed.size + this.creations.size;
  }

  /** The installed (hence live) worker of `key`. */
  live(key: string): ScopeWorker<S> | undefined {
    return this.installed.get(key);
  }

  creationOf(key: string): ScopeCreation<S> | undefined {
    return this.creations.get(key);
  }

  /**
   * Reserves a slot for a new worker of `key`. A full registry first reclaims at most one worker
   * (when allowed); `null` when nothing could be reclaimed.
   */
  reserve(key: string, now: number): ScopeCreation<S> | null {
    if (this.activeScopes >= this.limits.capacity && !this.reclaimOne(now)) return null;
    const creation = new ScopeCreation(new ScopeWorker<S>(key, ++this.incarnations, now));
    this.creations.set(key, creation);
    return creation;
  }

  /** Turns a creation's reserved slot into an installed, live worker. */
  install(creation: ScopeCreation<S>, now: number): void {
    const worker = creation.worker;
    this.creations.delete(worker.key);
    worker.state = 'live';
    worker.lastAccess = now;
    this.installed.set(worker.key, worker);
    this.recency.push(worker);
  }

  /** Frees a creation's slot; its worker is retired without ever having been installed. */
  drop(creation: ScopeCreation<S>): void {
    if (this.creations.get(creation.key) === creation) this.creations.delete(creation.key);
    creation.worker.state = 'retired';
  }

  /** Records an access: the worker moves to the most-recent end. */
  touch(worker: ScopeWorker<S>, now: number): void {
    if (worker.state !== 'live') return;
    worker.lastAccess = now;
    this.recency.remove(worker);
    this.recency.push(worker);
  }

  /** Empties the registry (router stop) and returns what it held. */
  clear(): { readonly workers: ScopeWorker<S>[]; readonly creations: ScopeCreation<S>[] } {
    const workers = [...this.installed.values()];
    const creations = [...this.creations.values()];
    for (const worker of workers) {
      this.recency.remove(worker);
      worker.state = 'retired';
    }
    for (const creation of creations) creation.worker.state = 'retired';
    this.installed.clear();
    this.creations.clear();
    return { workers, creations };
  }

  /** The first worker in least-recent-access order that is unused and idle for `idleScopeTimeoutMs`. */
  private reclaimOne(now: number): boolean {
    if (!this.limits.reclaim) return false;
    for (const worker of this.recency) {
      if (worker.lastAccess + this.limits.idleScopeTimeoutMs > now) return false;
      if (!worker.unused) continue;
      this.recency.remove(worker);
      this.installed.delete(worker.key);
      worker.state = 'retired';
      this.idleEvictions++;
      return true;
    }
    return false;
  }
}
