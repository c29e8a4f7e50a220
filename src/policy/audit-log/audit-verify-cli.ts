import { createAgentRuntimeDataSource } from '../../database/data-source.factory';
import { openProjectDatabase } from '../../database/embedded/embedded-postgres';
import { classifyFailure } from '../../database/postgres-failure';
import { AgentRuntimeError } from '../../shared/errors/agent-runtime-error';
import { assertAuditLogSchema } from './audit-log.schema';
import { verifyAuditChain } from './audit-chain-verification';

/**
 * `npm run audit:verify`: verifies the policy audit chain of `DATABASE_URL` (or the project's
 * embedded server) and prints the report as JSON. Exit 0 intact, 1 broken, 2 could not verify.
 */
async function main(): Promise<number> {
  const database = await openProjectDatabase();
  const dataSource = createAgentRuntimeDataSource(database.url);
  try {
    await dataSource.initialize();
    await assertAuditLogSchema(dataSource);
    const report = await verifyAuditChain(dataSource);
    console.log(JSON.stringify(report, null, 2));
    return report.ok ? 0 : 1;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // the package's own errors carry a code and content-free details; anything else only its database codes
    const report = AgentRuntimeError.isAgentRuntimeError(error)
      ? { ok: false, error: error.code, details: error.details ?? null }
      : { ok: false, error: 'could_not_verify', details: classifyFailure(error).codes };
    console.error(JSON.stringify(report));
    process.exit(2);
  },
);
