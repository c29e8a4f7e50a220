import type { DataSource } from 'typeorm';
import { AdmissionController } from '../../src/admission/admission-controller';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionService } from '../../src/admission/admission-service';
import type { AdmissionStatus } from '../../src/admission/admission.types';
import { ClusterAdmissionController } from '../../src/admission/cluster/cluster-admission-controller';
import type { ClusterAdmissionStatus } from '../../src/admission/cluster/cluster-admission.types';
import { ClusterInstance } from '../../src/cluster/cluster-instance';
import { poolOf } from '../../src/database/postgres-pool';
import type { Clock } from '../../src/shared/time/clock';
import { randomId } from '../../src/shared/ids/random-id';
import type { TelemetrySink } from '../../src/telemetry/telemetry-sink';
import { openDatabaseHarness, type DatabaseHarness } from './database-harness';

/**
 * The two implementations of `AdmissionService` that spec 01's suites run against: the
 * process-local `AdmissionController` and a single `ClusterAdmissionController` instance on a
 * fresh migrated database (spec 08 §3: one instance keeps every single-instance guarantee).
 */
export type AdmissionVariantName = 'local' | 'cluster';

/** Every variant, or those named in `ADMISSION_VARIANTS` (comma-separated), e.g. `ADMISSION_VARIANTS=local`. */
export const ADMISSION_VARIANTS: readonly AdmissionVariantName[] = (() => {
  const all: AdmissionVariantName[] = ['local', 'cluster'];
  const wanted = process.env.ADMISSION_VARIANTS?.split(',').map((name) => name.trim());
  return wanted ? all.filter((name) => wanted.includes(name)) : all;
})();

/** What a controller is built from: the spec 01 deps (the system clock and no telemetry when omitted). */
export interface AdmissionDeps {
  readonly clock?: Clock;
  readonly events?: TelemetrySink;
}

/** A started controller of one variant and what tests need of it besides its public API. */
export interface VariantController {
  readonly controller: AdmissionService;
  /**
   * Resolves once every effect of what the test did has been delivered: one macrotask for the
   * local controller (its effects run before an operation returns, promise settlements one turn
   * later), and for the cluster controller once no decision transaction is in flight and no
   * telemetry arrived for a few polls.
   */
  settle(): Promise<void>;
  /** Stops the controller and frees what it used; safe to call twice. */
  close(): Promise<void>;
}

/** One variant for one `describe` block. */
export interface AdmissionVariant {
  readonly name: AdmissionVariantName;
  /** Whether every effect of an operation has happened when it returns (the local controller). */
  readonly synchronous: boolean;
  /** Status keys beyond spec 01 §5.8 that the variant documents: spec 08 §3's `instances_live` and `instance`. */
  readonly extraStatusKeys: readonly string[];
  /** Delays of the timers the controller keeps for itself on the clock (the cluster's reap and poll). */
  readonly backgroundDelays: readonly number[];
  /** The controller class's static `deadlineAfter` (on the system clock). */
  readonly staticDeadlineAfter: (ms: number | 'infinity') => number | 'infinity';
  /** A started controller on `config`; closed after the test unless closed before. */
  create(config: AdmissionConfig | undefined, deps: AdmissionDeps): Promise<VariantController>;
  /** `status` without the variant's extra keys, i.e. the spec 01 record, after checking those keys. */
  coreStatus(status: AdmissionStatus): AdmissionStatus;
}

/**
 * Registers the hooks the variant needs in the enclosing `describe` block (the cluster's databases)
 * and returns it. Call once per block, at collection time.
 */
export function useAdmissionVariant(name: AdmissionVariantName): AdmissionVariant {
  return name === 'local' ? localVariant() : clusterVariant();
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

function localVariant(): AdmissionVariant {
  return {
    name: 'local',
    synchronous: true,
    extraStatusKeys: [],
    backgroundDelays: [],
    staticDeadlineAfter: (ms) => AdmissionController.deadlineAfter(ms),
    async create(config, deps) {
      const controller = new AdmissionController(config, deps);
      return { controller, settle: macrotask, close: async () => undefined };
    },
    coreStatus: (status) => status,
  };
}

// ---- cluster -------------------------------------------------------------------------------------

const CLUSTER_STATUS_KEYS = ['instance', 'instances_live'];
/** The reap and poll period (the default), on the test's clock: advancing it by a second or more runs a poll decision. */
const REAP_INTERVAL_MS = 1000;
const TRUNCATE = 'TRUNCATE agent_runtime_admission_permits, agent_runtime_admission_queue, agent_runtime_admission_config, agent_runtime_admission_buckets, agent_runtime_admission_fair_tags, agent_runtime_admission_adaptive, agent_runtime_cluster_instances';

/** A migrated database of the block with one DataSource on it, used by one controller at a time. */
interface PooledDatabase {
  readonly harness: DatabaseHarness;
  readonly dataSource: DataSource;
  busy: boolean;
}

function clusterVariant(): AdmissionVariant {
  // one database per controller alive at once (a test may build two controllers), reused after a truncate
  const databases: PooledDatabase[] = [];
  const open = new Set<VariantController>();

  afterEach(async () => {
    await Promise.all([...open].map((controller) => controller.close()));
  });
  afterAll(async () => {
    await Promise.all(databases.splice(0).map((database) => database.harness.close()));
  });

  const takeDatabase = async (): Promise<PooledDatabase> => {
    const free = databases.find((database) => !database.busy);
    if (free) {
      free.busy = true;
      return free;
    }
    const harness = await openDatabaseHarness();
    const database: PooledDatabase = { harness, dataSource: await harness.dataSource(), busy: true };
    databases.push(database);
    return database;
  };

  return {
    name: 'cluster',
    synchronous: false,
    extraStatusKeys: CLUSTER_STATUS_KEYS,
    backgroundDelays: [REAP_INTERVAL_MS],
    staticDeadlineAfter: (ms) => ClusterAdmissionController.deadlineAfter(ms),
    async create(config, deps) {
      const database = await takeDatabase();
      const { dataSource } = database;
      const instance = new ClusterInstance({ dataSource, instanceId: randomId('instance-') });
      let controller: ClusterAdmissionController | undefined;
      let closed: Promise<void> | undefined;
      // the sink is wrapped to count deliveries: quiescence waits until no more arrive
      let eventsSeen = 0;
      const sink = deps.events;
      const events: TelemetrySink | undefined = sink && {
        emit: (event, payload) => {
          eventsSeen++;
          return sink.emit(event, payload);
        },
      };
      const close = (): Promise<void> =>
        (closed ??= (async () => {
          open.delete(handle);
          await controller?.stop().catch(() => undefined);
          await instance.stop().catch(() => undefined);
          await database.harness.sql(TRUNCATE);
          database.busy = false;
        })());
      const handle: VariantController = {
        get controller() {
          return controller as ClusterAdmissionController;
        },
        settle: () => quiescence(dataSource, () => eventsSeen),
        close,
      };
      open.add(handle);
      try {
        // built before the instance starts, so a refused configuration costs no database work
        controller = new ClusterAdmissionController(config, { instance, reapIntervalMs: REAP_INTERVAL_MS }, { clock: deps.clock, events });
        await instance.start();
        await controller.start();
      } catch (error) {
        await close();
        throw error;
      }
      return handle;
    },
    coreStatus(status) {
      const { instances_live, instance, ...core } = status as ClusterAdmissionStatus;
      // one instance: its own counts are the cluster's
      expect(instances_live).toBe(1);
      expect(instance).toEqual({ active: status.active, queued: status.queue_length });
      return core as AdmissionStatus;
    },
  };
}

/**
 * Waits until the controller's pool has no client checked out (no decision transaction runs) and
 * no telemetry arrived, on three polls in a row. A single instance learns its own grants from its
 * decisions, so nothing of its work travels outside the pool.
 */
async function quiescence(dataSource: DataSource, eventsSeen: () => number, timeoutMs = 60_000): Promise<void> {
  const pool = poolOf(dataSource) as unknown as { totalCount: number; idleCount: number; waitingCount: number };
  const until = Date.now() + timeoutMs;
  let last = -1;
  let quiet = 0;
  while (quiet < 3) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    const busy = pool.totalCount - pool.idleCount + pool.waitingCount;
    const seen = eventsSeen();
    if (busy === 0 && seen === last) quiet++;
    else quiet = 0;
    last = seen;
    if (Date.now() > until) throw new Error('the cluster controller did not settle');
  }
}
