import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { AppDataSourceOptions } from '../../database/app-data-source';
import { resolveAppDataSource } from '../../database/app-data-source.provider';
import type { StartupSchemaCheck } from '../../database/schema/startup-schema-check';
import type { AuditChainReport } from './audit-chain-verification';
import type { AuditChainVerifier } from './audit-chain-verifier';
import type { AuditSink } from './audit-sink';
import type { PolicyDecision } from '../policy-decision';
import { PostgresAuditLog } from './postgres-audit-log';
import { AUDIT_TABLE_SPECS } from './audit-log.schema';
import { RuntimePolicyError } from '../runtime-policy.errors';

/**
 * The `'postgres'` audit sink of `RuntimePolicyModule`: finds the TypeORM DataSource once every
 * provider exists (`onModuleInit`), validates the audit schema (failing start-up on a mismatch, in
 * the app's one start-up report when a {@link StartupSchemaCheck} is given),
 * then records through a {@link PostgresAuditLog} and verifies its chain.
 */
@Injectable()
export class DeferredPostgresAuditLog implements AuditSink, AuditChainVerifier, OnModuleInit {
  private log: PostgresAuditLog | undefined;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly dataSourceChoice: AppDataSourceOptions,
    private readonly schemaCheck?: StartupSchemaCheck,
  ) {
    schemaCheck?.register('policy_audit_log', () => ({ dataSource: resolveAppDataSource(moduleRef, dataSourceChoice), specs: AUDIT_TABLE_SPECS }));
  }

  async onModuleInit(): Promise<void> {
    await this.schemaCheck?.assertAll();
    const log = new PostgresAuditLog(resolveAppDataSource(this.moduleRef, this.dataSourceChoice));
    await log.init();
    this.log = log;
  }

  record(decision: PolicyDecision): Promise<void> {
    if (!this.log) return Promise.reject(new RuntimePolicyError('runtime_policy_audit_persistence_failed'));
    return this.log.record(decision);
  }

  verify(): Promise<AuditChainReport> {
    if (!this.log) return Promise.reject(new RuntimePolicyError('runtime_policy_audit_persistence_failed'));
    return this.log.verify();
  }

  /** The underlying log (`undefined` before start-up). */
  get auditLog(): PostgresAuditLog | undefined {
    return this.log;
  }
}
