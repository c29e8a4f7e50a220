import { PolicyAuditLog1764400000000 } from './1764400000000-policy-audit-log';
import { InvocationLedger1764500000000 } from './1764500000000-invocation-ledger';
import { PolicyAuditHeadGuard1764600000000 } from './1764600000000-policy-audit-head-guard';
import { RunnerSessions1764700000000 } from './1764700000000-runner-sessions';
import { EvaluationStore1764800000000 } from './1764800000000-evaluation-store';
import { RuntimeArtifacts1764900000000 } from './1764900000000-runtime-artifacts';
import { RuntimeMemory1764900000001 } from './1764900000001-runtime-memory';
import { MemoryOutbox1764900000002 } from './1764900000002-memory-outbox';
import { ClusterInstances1765000000000 } from './1765000000000-cluster-instances';
import { ClusterAdmission1765000000001 } from './1765000000001-cluster-admission';
import { ClusterRuns1765000000002 } from './1765000000002-cluster-runs';
import { RunOwnerPrincipal1765100000000 } from './1765100000000-run-owner-principal';
import { ClusterInstanceGrace1765200000000 } from './1765200000000-cluster-instance-grace';
import { ClusterAdmissionFlow1765300000000 } from './1765300000000-cluster-admission-flow';

/**
 * The migrations of each module, by group name. A group holds every table its module reads and
 * nothing else; no migration refers to a table of another group, so any selection of groups applies.
 * Listed explicitly (not globbed) so the same lists serve the bin, the reference app and the Jest
 * global setup.
 */
export const MIGRATIONS_BY_GROUP = Object.freeze({
  /** The policy audit log (`RuntimePolicyModule` with `auditLog: 'postgres'`): the chain, its head and their guards. */
  'audit-log': Object.freeze([PolicyAuditLog1764400000000, PolicyAuditHeadGuard1764600000000]),
  /** The invocation ledger (`LedgerModule`). */
  ledger: Object.freeze([InvocationLedger1764500000000]),
  /** The Postgres session service of the Runner. */
  sessions: Object.freeze([RunnerSessions1764700000000]),
  /** The evaluation store (`EvaluationModule`, the `eval-gate` command). */
  evaluation: Object.freeze([EvaluationStore1764800000000]),
  /** The durable artifact service. */
  artifacts: Object.freeze([RuntimeArtifacts1764900000000]),
  /** The durable memory service and its outbox. */
  memory: Object.freeze([RuntimeMemory1764900000001, MemoryOutbox1764900000002]),
  /** Cluster mode: instances, admission across instances, and runs followed from any instance. */
  cluster: Object.freeze([ClusterInstances1765000000000, ClusterAdmission1765000000001, ClusterRuns1765000000002, RunOwnerPrincipal1765100000000, ClusterInstanceGrace1765200000000, ClusterAdmissionFlow1765300000000]),
} satisfies Record<string, readonly Function[]>);

/** Every TypeORM migration of the package, in the order they were written (their timestamps). */
export const AGENT_RUNTIME_MIGRATIONS: Function[] = [PolicyAuditLog1764400000000, InvocationLedger1764500000000, PolicyAuditHeadGuard1764600000000, RunnerSessions1764700000000, EvaluationStore1764800000000, RuntimeArtifacts1764900000000, RuntimeMemory1764900000001, MemoryOutbox1764900000002, ClusterInstances1765000000000, ClusterAdmission1765000000001, ClusterRuns1765000000002, RunOwnerPrincipal1765100000000, ClusterInstanceGrace1765200000000, ClusterAdmissionFlow1765300000000];

/** What a migration creates that outlives it: tables and functions in the migrations' schema. */
export interface MigrationObjects {
  readonly tables?: readonly string[];
  readonly functions?: readonly string[];
}

/**
 * The objects of each migration above, by migration name. Before migrations run, a pending
 * migration whose objects already exist means its row in the migrations table was deleted: that
 * is reported as a schema mismatch instead of re-running the migration.
 */
export const AGENT_RUNTIME_MIGRATION_OBJECTS: Readonly<Record<string, MigrationObjects>> = Object.freeze({
  PolicyAuditLog1764400000000: { tables: ['agent_runtime_policy_audit_log', 'agent_runtime_policy_audit_head'], functions: ['agent_runtime_policy_audit_log_append_only'] },
  InvocationLedger1764500000000: { tables: ['agent_runtime_invocations'] },
  PolicyAuditHeadGuard1764600000000: { functions: ['agent_runtime_policy_audit_head_guard'] },
  RunnerSessions1764700000000: { tables: ['agent_runtime_sessions', 'agent_runtime_session_events'] },
  EvaluationStore1764800000000: {
    tables: ['agent_runtime_eval_set_revisions', 'agent_runtime_eval_jobs', 'agent_runtime_eval_baselines', 'agent_runtime_eval_usage', 'agent_runtime_eval_identity'],
  },
  RuntimeArtifacts1764900000000: { tables: ['agent_runtime_artifacts', 'agent_runtime_artifact_heads'] },
  RuntimeMemory1764900000001: { tables: ['agent_runtime_memory_entries', 'agent_runtime_memory_erasure_epochs'] },
  MemoryOutbox1764900000002: { tables: ['agent_runtime_memory_outbox_jobs', 'agent_runtime_memory_outbox_usage'] },
  ClusterInstances1765000000000: { tables: ['agent_runtime_cluster_instances'] },
  ClusterAdmission1765000000001: { tables: ['agent_runtime_admission_config', 'agent_runtime_admission_permits', 'agent_runtime_admission_queue'] },
  ClusterRuns1765000000002: { tables: ['agent_runtime_runs', 'agent_runtime_run_items'] },
  RunOwnerPrincipal1765100000000: {},
  ClusterInstanceGrace1765200000000: {},
  ClusterAdmissionFlow1765300000000: { tables: ['agent_runtime_admission_buckets', 'agent_runtime_admission_fair_tags', 'agent_runtime_admission_adaptive'] },
});
