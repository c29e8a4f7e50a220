import { createAgentRuntimeDataSource } from '../../database/data-source.factory';
import { openProjectDatabase } from '../../database/embedded-postgres';
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
    const code = (error as { code?: unknown }).code;
    const details = (error as { details?: unknown }).details;
    console.error(JSON.stringify({ ok: false, error: typeof code === 'string' ? code : 'could_not_verify', details: details ?? null }));
    process.exit(2);
  },
);
