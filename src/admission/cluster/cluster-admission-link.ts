import type { ResolvedAdmissionConfig } from '../admission-config';
import { AdmissionError } from '../admission.errors';
import { NotificationListener } from '../../database/notification-listener';
import { classifyFailure } from '../../database/postgres-failure';
import { runStatement } from '../../database/statement-runner';
import { CoalescedTask } from '../../shared/async/coalesced-task';
import { rejectedWith } from '../../shared/async/handled-promise';
import type { Clock } from '../../shared/time/clock';
import type { ClusterInstance } from '../../cluster/cluster-instance';
import { admissionConfigFingerprint } from './admission-config-fingerprint';
import { storeUnavailable } from './admission-decisions';
import { ADMISSION_CHANNEL, SELECT_HELD } from './admission-sql';
import { agreeOnConfig, assertAdmissionSchema } from './cluster-admission-startup';
import type { ResolvedClusterAdmissionOptions } from './cluster-admission-options';

/** What a {@link ClusterAdmissionLink} asks of its controller. */
export interface ClusterLinkHandlers {
  /** One decision that reaps, dispatches and checks this instance's rows; `retireAll` deletes this id's rows first. */
  decide(plan: { readonly poll: true; readonly retireAll?: boolean }): Promise<unknown>;
  /** This instance's requests that wait for a grant (queued, or pending their submit decision). */
  waiting(): string[];
  /** Those of `waiting()` that hold a permit, as read after a notification. */
  granted(refs: readonly string[]): void;
}

/**
 * This instance's link to cluster admission (spec 08 §3): the start-up checks (the tables, the agreed
 * limits), the LISTEN for grants and the read of them it triggers, the periodic decision that reaps dead
 * instances and polls for grants NOTIFY missed, and the background work a stop waits for.
 */
export class ClusterAdmissionLink {
  private phase: 'new' | 'starting' | 'started' | 'stopped' = 'new';
  private starting: Promise<void> | undefined = undefined;
  private listener: NotificationListener | undefined = undefined;
  private pollTimer: unknown = undefined;
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** After a notification (or a reconnection of the listener): reads which waiting requests were granted. */
  private readonly grantReader = new CoalescedTask(() => this.readGrants(), (run) => void this.track(run));

  constructor(
    private readonly instance: ClusterInstance,
    private readonly options: ResolvedClusterAdmissionOptions,
    private readonly config: ResolvedAdmissionConfig,
    private readonly clock: Clock,
    private readonly handlers: ClusterLinkHandlers,
  ) {}

  /** Started and not stopped: decisions may run. */
  get started(): boolean {
    return this.phase === 'started';
  }

  /** Started and holding the instance lock: new requests may be admitted. */
  get admitting(): boolean {
    return this.phase === 'started' && this.instance.live;
  }

  get stopped(): boolean {
    return this.phase === 'stopped';
  }

  /** Aborts at stop: ends the retries of background work. */
  get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  /** True while started, the LISTEN connection is up and the instance holds its lock. */
  get connected(): boolean {
    return this.phase === 'started' && this.listener?.connected === true && this.instance.live;
  }

  /** Checks the tables and the limits, LISTENs, runs the first decision and arms the poll. Idempotent; a failed start may be retried. */
  start(): Promise<void> {
    if (this.phase === 'started') return Promise.resolve();
    if (this.phase === 'stopped') return rejectedWith(new AdmissionError('admission_store_unavailable'));
    this.starting ??= this.startOnce().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Waits for a start under way, then stops the poll and refuses new work; `true` when the link had started. */
  async halt(): Promise<boolean> {
    await this.starting?.catch(() => undefined);
    const wasStarted = this.phase === 'started';
    this.phase = 'stopped';
    this.stopping.abort();
    if (this.pollTimer !== undefined) this.clock.clearTimer(this.pollTimer);
    this.pollTimer = undefined;
    return wasStarted;
  }

  /** Closes the LISTEN connection and waits for the background work still running. */
  async close(): Promise<void> {
    await this.listener?.close();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Background work a stop waits for. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  private async startOnce(): Promise<void> {
    this.phase = 'starting';
    try {
      await assertAdmissionSchema(this.instance.dataSource);
      await agreeOnConfig(this.instance.pool, admissionConfigFingerprint(this.config));
      const grantsMayWait = () => {
        if (this.phase === 'started') this.grantReader.trigger();
      };
      const listener = new NotificationListener(
        this.instance.pool,
        { channels: [ADMISSION_CHANNEL], backoff: this.options.listenerBackoff },
        { notified: (_channel, payload) => payload === this.instance.instanceId && grantsMayWait(), reconnected: grantsMayWait },
      );
      this.listener = listener;
      await listener.start().catch((error: unknown) => {
        throw storeUnavailable(classifyFailure(error));
      });
      this.phase = 'started';
      this.instance.attach('admission', () => this.listener?.connected === true);
      // rows under this id were left by an earlier life of this instance (a restart with a fixed id)
      await this.handlers.decide({ poll: true, retireAll: true });
      this.armPoll();
    } catch (error) {
      this.phase = 'new';
      await this.listener?.close();
      this.listener = undefined;
      throw error;
    }
  }

  private async readGrants(): Promise<void> {
    const refs = this.handlers.waiting();
    if (refs.length === 0 || this.phase !== 'started') return;
    // a failure is left to the periodic poll, which reads the grants too
    const rows = await runStatement(this.instance.pool, SELECT_HELD, [this.instance.instanceId, refs], storeUnavailable);
    this.handlers.granted(rows.map((row) => row.request_id as string));
  }

  private armPoll(): void {
    this.pollTimer = this.clock.setTimer(() => {
      this.pollTimer = undefined;
      this.track(this.poll());
    }, this.options.reapIntervalMs);
  }

  /** The periodic decision: reaps dead instances, dispatches, and checks this instance's rows. */
  private async poll(): Promise<void> {
    try {
      await this.handlers.decide({ poll: true });
    } catch {
      // the store is unreachable: the next poll tries again, and nothing is admitted meanwhile
    } finally {
      if (this.phase === 'started') this.armPoll();
    }
  }
}
