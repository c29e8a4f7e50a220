import { createAgentRuntimeDataSource } from './data-source.factory';
import { failureReportLines } from './failure-report';
import { openProjectDatabase } from './embedded/embedded-postgres';

/**
 * `npm run migration:run` / `npm run migration:show`: against `DATABASE_URL`, or the project's
 * embedded server (reused when running, else started for the length of the command).
 */
async function main(command: string | undefined): Promise<number> {
  if (command !== 'run' && command !== 'show') {
    console.error('usage: migration-cli run|show');
    return 2;
  }
  const database = await openProjectDatabase();
  const dataSource = createAgentRuntimeDataSource(database.url);
  try {
    await dataSource.initialize();
    if (command === 'run') {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      console.log(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}` : 'no pending migrations');
    } else {
      const pending = await dataSource.showMigrations();
      const executed = await dataSource.query(`SELECT name FROM ${dataSource.options.migrationsTableName} ORDER BY id`).catch(() => []);
      console.log(`applied (${executed.length}): ${executed.map((row: { name: string }) => row.name).join(', ') || '-'}`);
      console.log(pending ? 'pending migrations: yes' : 'pending migrations: none');
    }
    return 0;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    for (const line of failureReportLines('migration failed:', error)) console.error(line);
    process.exit(1);
  },
);
