import { Inject, Injectable, Optional } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AdmissionService } from '../../admission/admission-service';
import { ADMISSION_SERVICE } from '../../admission/admission.constants';
import type { AdmissionStatus } from '../../admission/admission.types';
import { statusWithoutTenantIds } from '../../admission/status-without-tenants';
import { AuditSink } from '../../policy/audit-log/audit-sink';
import { DeferredPostgresAuditLog } from '../../policy/audit-log/deferred-postgres-audit-log.service';
import { PostgresAuditLog } from '../../policy/audit-log/postgres-audit-log';
import type { Principal } from '../../http/principal';
import { RunAccess, type OwnedRun } from '../../runner/runs/run-access';
import { RunRegistry } from '../../runner/runs/run-registry';
import type { RunStatusRecord } from '../../runner/runs/run-registry.types';
import { RUNS_MODULE_OPTIONS, type ResolvedRunsModuleOptions } from '../../runner/runs/runs-module-options';
import { RunStore } from '../../runner/runs/stores/run-store';
import { recentDenials } from './audit-denials';
import { CONSOLE_OPTIONS, type ResolvedConsoleOptions } from './console-options';
import type { ConsoleAdmission, ConsoleDenials, ConsoleRun, ConsoleSnapshot } from './console-snapshot.types';
import { PendingConfirmations } from './pending-confirmations';

const NO_AUDIT_LOG: ConsoleDenials = Object.freeze({ status: 'no_postgres_audit_log' });
const NOT_SHOWN: ConsoleDenials = Object.freeze({ status: 'not_shown' });

/**
 * Builds the console's content-free snapshot from the modules the application has: the admission
 * status, the runs of the `RunRegistry` with their pending confirmations, and the newest denials of
 * the Postgres audit log. A missing module gives its section as `null`; building never throws. For a
 * viewer principal, runs are those `RunsModule`'s access rule allows for `list`, confirmations those
 * of them it allows for `confirm`; denials are `{status: 'not_shown'}` unless `mayViewDenials` allows,
 * and tenant ids are folded into `other_tenants` unless `mayViewTenants` allows.
 */
@Injectable()
export class ConsoleSnapshotService {
  private readonly confirmations: PendingConfirmations;
  private readonly access: RunAccess;

  constructor(
    @Inject(CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
    @Optional() @Inject(ADMISSION_SERVICE) private readonly admission: AdmissionService | null,
    @Optional() @Inject(RunRegistry) private readonly registry: RunRegistry | null,
    @Optional() @Inject(RunStore) store: RunStore | null,
    @Optional() @Inject(AuditSink) private readonly auditSink: AuditSink | null,
    @Optional() @Inject(RUNS_MODULE_OPTIONS) runsOptions: ResolvedRunsModuleOptions | null,
  ) {
    this.confirmations = new PendingConfirmations(store ?? null);
    this.access = new RunAccess(runsOptions?.authorizeRun);
  }

  /** The snapshot `viewer` may see; `null` (no principal options) shows everything the guard let through. */
  async snapshot(viewer: Principal | null = null): Promise<ConsoleSnapshot> {
    const runs = await this.visibleRuns(viewer).catch(() => null);
    const confirmable = runs && viewer ? await this.access.filter(viewer, 'confirm', runs) : runs;
    return Object.freeze({
      schema_version: 1 as const,
      admission: this.admission ? consoleAdmission(this.admissionStatus(this.admission, viewer)) : null,
      runs: runs ? runs.map(consoleRun) : null,
      confirmations: confirmable ? await this.confirmations.of(confirmable).catch(() => null) : null,
      denials: viewer === null || mayView(this.options.mayViewDenials, viewer) ? await this.denials() : NOT_SHOWN,
    });
  }

  /** The admission status; tenant ids only for a viewer `mayViewTenants` allows (or without principal options). */
  private admissionStatus(admission: AdmissionService, viewer: Principal | null): AdmissionStatus {
    const status = admission.status();
    return viewer === null || mayView(this.options.mayViewTenants, viewer) ? status : statusWithoutTenantIds(status);
  }

  private async visibleRuns(viewer: Principal | null): Promise<readonly OwnedRun[] | null> {
    if (!this.registry) return null;
    const runs = await this.registry.list(this.options.maxRuns);
    return viewer ? this.access.filter(viewer, 'list', runs) : runs;
  }

  private async denials(): Promise<ConsoleDenials> {
    const dataSource = this.auditDataSource();
    return dataSource ? recentDenials(dataSource, this.options.maxDenials) : NO_AUDIT_LOG;
  }

  /** The DataSource of the policy module's Postgres audit log (the one the log writes to); `null` without one. */
  private auditDataSource(): DataSource | null {
    const sink = this.auditSink;
    if (sink instanceof DeferredPostgresAuditLog) return sink.auditLog?.dataSource ?? null;
    return sink instanceof PostgresAuditLog ? sink.dataSource : null;
  }
}

/** One of the app's `mayView…` rules; a throw is `false`. */
function mayView(rule: (principal: Principal) => boolean, viewer: Principal): boolean {
  try {
    return rule(viewer) === true;
  } catch {
    return false;
  }
}

function consoleAdmission(status: AdmissionStatus): ConsoleAdmission {
  const perAgent = Object.keys(status.per_agent)
    .sort()
    .map((agent) => Object.freeze({ agent, ...status.per_agent[agent] }));
  const { per_tenant: tenants, ...rest } = status;
  if (tenants === undefined) return Object.freeze({ ...rest, per_agent: Object.freeze(perAgent) });
  const perTenant = Object.keys(tenants)
    .map((tenant) => Object.freeze({ tenant, ...tenants[tenant] }))
    .sort((a, b) => b.active + b.queued - (a.active + a.queued) || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  return Object.freeze({ ...rest, per_agent: Object.freeze(perAgent), per_tenant: Object.freeze(perTenant) });
}

function consoleRun(run: RunStatusRecord): ConsoleRun {
  return Object.freeze({
    run_id: run.run_id,
    agent: run.agent,
    status: run.status,
    pending_call_ids: run.pending_call_ids,
    created_at_ms: run.created_at_ms,
    updated_at_ms: run.updated_at_ms,
    last_seq: run.last_seq,
    error_code: run.error?.code ?? null,
  });
}
