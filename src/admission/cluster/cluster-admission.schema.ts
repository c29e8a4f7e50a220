import { defineTableSpec, type TableSpec } from '../../database/schema/table-spec';

/** The one row holding the fingerprint of the cluster's admission limits. */
export const ADMISSION_CONFIG_TABLE = 'agent_runtime_admission_config';
/** The permits held across the cluster. */
export const ADMISSION_PERMITS_TABLE = 'agent_runtime_admission_permits';
/** The queued requests of the whole cluster, in `seq` order. */
export const ADMISSION_QUEUE_TABLE = 'agent_runtime_admission_queue';

const keyText = { type: 'text', nullable: false, collation: 'C' } as const;
const stampedNow = { type: 'timestamp with time zone', nullable: false, default: 'clock_timestamp()' } as const;
const C = ADMISSION_CONFIG_TABLE;
const P = ADMISSION_PERMITS_TABLE;
const Q = ADMISSION_QUEUE_TABLE;

/**
 * What `ClusterAdmissionController` needs of its three tables (spec 08 §3), as migration
 * `ClusterAdmission1765000000001` creates them; compared with the catalog at start.
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
    ],
    primaryKey: ['permit_id'],
    uniques: [{ name: `${P}_request_key`, columns: ['request_id'] }],
    indexes: [
      { name: `${P}_agent_idx`, columns: ['agent_id'], unique: false, method: 'btree' },
      { name: `${P}_instance_idx`, columns: ['instance_id'], unique: false, method: 'btree' },
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
    ],
    primaryKey: ['request_id'],
    uniques: [
      { name: `${Q}_permit_key`, columns: ['permit_id'] },
      { name: `${Q}_seq_idx`, columns: ['seq'] },
    ],
    indexes: [
      { name: `${Q}_agent_seq_idx`, columns: ['agent_id', 'seq'], unique: false, method: 'btree' },
      { name: `${Q}_instance_idx`, columns: ['instance_id'], unique: false, method: 'btree' },
    ],
  }),
]);
