import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** The one row holding the fingerprint of the cluster's admission limits. */
export const ADMISSION_CONFIG_TABLE = 'agent_runtime_admission_config';
/** The permits held across the cluster. */
export const ADMISSION_PERMITS_TABLE = 'agent_runtime_admission_permits';
/** The queued requests of the whole cluster, in `seq` order. */
export const ADMISSION_QUEUE_TABLE = 'agent_runtime_admission_queue';
/** Token buckets of the rated scope instances (spec 09 §5): levels as of `at_ms`, wall-clock ms of the deciding instance. */
export const ADMISSION_BUCKETS_TABLE = 'agent_runtime_admission_buckets';
/** Finish tags of fair queueing by flow owner, and the virtual time (spec 09 §3). */
export const ADMISSION_FAIR_TAGS_TABLE = 'agent_runtime_admission_fair_tags';
/** The effective limit of each adaptive agent, cluster-wide (spec 09 §6). */
export const ADMISSION_ADAPTIVE_TABLE = 'agent_runtime_admission_adaptive';

const keyText = { type: 'text', nullable: false, collation: 'C' } as const;
const stampedNow = { type: 'timestamp with time zone', nullable: false, default: 'clock_timestamp()' } as const;
const flowKey = { type: 'text', nullable: true, collation: 'C' } as const;
const double = { type: 'double precision', nullable: false } as const;
const C = ADMISSION_CONFIG_TABLE;
const P = ADMISSION_PERMITS_TABLE;
const Q = ADMISSION_QUEUE_TABLE;

/**
 * What `ClusterAdmissionController` needs of its tables (spec 08 §3, spec 09 §9), as migrations
 * `ClusterAdmission1765000000001` and `ClusterAdmissionFlow1765300000000` create them; compared with
 * the catalog at start.
 */
export const CLUSTER_ADMISSION_TABLE_SPECS: readonly TableSpec[] = Object.freeze([
  defineTableSpec({
    name: C,
    columns: [
      { name: 'config_key', ...keyText, default: "'limits'::text" },
      { name: 'fingerprint', ...keyText },
      { name: 'limits', type: 'jsonb', nullable: false },
      { name: 'written_at', ...stampedNow },
    ],
    primaryKey: ['config_key'],
    checks: [{ name: `${C}_single`, expression: "config_key = 'limits'::text" }],
  }),
  defineTableSpec({
    name: P,
    columns: [
      { name: 'permit_id', ...keyText },
      { name: 'request_id', ...keyText },
      { name: 'agent_id', ...keyText },
      { name: 'instance_id', ...keyText },
      { name: 'granted_at', ...stampedNow },
      { name: 'tenant_id', ...flowKey },
      { name: 'cost', ...double, default: '1' },
      { name: 'saturated', type: 'boolean', nullable: false, default: 'false' },
    ],
    primaryKey: ['permit_id'],
    uniques: [{ name: `${P}_request_key`, columns: ['request_id'] }],
    indexes: [
      { name: `${P}_agent_idx`, columns: ['agent_id'], unique: false, method: 'btree' },
      { name: `${P}_instance_idx`, columns: ['instance_id'], unique: false, method: 'btree' },
      { name: `${P}_tenant_idx`, columns: ['tenant_id'], unique: false, method: 'btree' },
    ],
  }),
  defineTableSpec({
    name: Q,
    columns: [
      { name: 'request_id', ...keyText },
      // an identity column: Postgres keeps no default expression for it
      { name: 'seq', type: 'bigint', nullable: false },
      { name: 'permit_id', ...keyText },
      { name: 'agent_id', ...keyText },
      { name: 'instance_id', ...keyText },
      { name: 'deadline_at', type: 'timestamp with time zone', nullable: true },
      { name: 'enqueued_at', ...stampedNow },
      { name: 'tenant_id', ...flowKey },
      { name: 'cost', ...double, default: '1' },
      { name: 'rank', type: 'smallint', nullable: false, default: '1' },
      { name: 'start_tag', ...double, default: '0' },
      { name: 'enqueued_ms', ...double, default: '0' },
    ],
    primaryKey: ['request_id'],
    uniques: [
      { name: `${Q}_permit_key`, columns: ['permit_id'] },
      { name: `${Q}_seq_idx`, columns: ['seq'] },
    ],
    indexes: [
      { name: `${Q}_agent_seq_idx`, columns: ['agent_id', 'seq'], unique: false, method: 'btree' },
      { name: `${Q}_instance_idx`, columns: ['instance_id'], unique: false, method: 'btree' },
      { name: `${Q}_flow_seq_idx`, columns: ['agent_id', 'tenant_id', 'seq'], unique: false, method: 'btree' },
    ],
  }),
  defineTableSpec({
    name: ADMISSION_BUCKETS_TABLE,
    columns: [
      { name: 'scope', ...keyText },
      { name: 'scope_id', ...keyText },
      { name: 'requests', ...double },
      { name: 'cost', ...double },
      { name: 'at_ms', ...double },
    ],
    primaryKey: ['scope', 'scope_id'],
    checks: [{ name: `${ADMISSION_BUCKETS_TABLE}_scope`, expression: "scope = ANY (ARRAY['global'::text, 'agent'::text, 'tenant'::text])" }],
  }),
  defineTableSpec({
    name: ADMISSION_FAIR_TAGS_TABLE,
    columns: [
      { name: 'tag_key', ...keyText },
      { name: 'tag', ...double },
    ],
    primaryKey: ['tag_key'],
  }),
  defineTableSpec({
    name: ADMISSION_ADAPTIVE_TABLE,
    columns: [
      { name: 'agent_id', ...keyText },
      { name: 'effective_limit', type: 'integer', nullable: false },
      { name: 'ok_count', type: 'integer', nullable: false },
      { name: 'last_decrease_ms', type: 'double precision', nullable: true },
    ],
    primaryKey: ['agent_id'],
  }),
]);
