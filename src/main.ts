import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { runAgentRuntimeMigrations } from './database/data-source.factory';
import { openProjectDatabase } from './database/embedded/embedded-postgres';
import { ReferenceAppModule } from './reference-app/reference-app.module';
import { failureReportLines } from './database/failure-report';
import { setUpReferenceApp } from './reference-app/reference-app.setup';
import { referenceUsers, referenceUsersNotice } from './reference-app/reference-auth';

/** Boots the reference service on `DATABASE_URL` or the embedded Postgres in `.data/postgres`. */
async function main(): Promise<void> {
  const logger = new Logger('ReferenceService');
  const database = await openProjectDatabase();
  logger.log(
    database.source === 'env'
      ? 'database: DATABASE_URL'
      : `database: embedded Postgres on port ${new URL(database.url).port} (${database.source === 'embedded-started' ? `started, data in ${database.dataDir}` : 'already running'})`,
  );
  const applied = await runAgentRuntimeMigrations(database.url);
  logger.log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date');

  const cluster = process.env.CLUSTER === '1' ? { ...(process.env.INSTANCE_ID ? { instanceId: process.env.INSTANCE_ID } : {}) } : undefined;
  if (cluster) logger.log(`cluster mode: instance ${cluster.instanceId ?? '(generated id)'}`);
  const users = referenceUsers();
  logger.log(referenceUsersNotice(users));
  const app = await NestFactory.create(ReferenceAppModule.forRoot({ databaseUrl: database.url, users, ...(cluster ? { cluster } : {}) }), { forceCloseConnections: true });
  setUpReferenceApp(app);
  await app.listen(Number(process.env.PORT ?? 3000));
  // PORT=0 takes a free port: report the one the server got
  const { port } = app.getHttpServer().address() as AddressInfo;
  const base = `http://localhost:${port}`;
  // the default demo token is in the docs; a token of the operator's own REFERENCE_USERS is never printed
  const token = process.env.REFERENCE_USERS ? '<token>' : 'alice-token';
  logger.log(
    [
      `listening on ${base}`,
      `  curl -s -X POST ${base}/agents/a/invoke -H 'content-type: application/json' -d '{"work_ms":2000}'`,
      `  curl -s -X POST ${base}/runs -H 'authorization: Bearer ${token}' -H 'content-type: application/json' -d '{"agent":"helper","message":"Where is the runbook?"}'`,
      `  curl -sN ${base}/runs/<run_id>/events -H 'authorization: Bearer ${token}'`,
      `  curl -s ${base}/admission/status`,
      `  curl -s ${base}/health/ready`,
    ].join('\n'),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: draining admission, then closing`);
    try {
      await app.close();
    } finally {
      await database.stop();
      logger.log('stopped');
      process.exit(0);
    }
  };
  // \`on\`, not \`once\`: npm passes on the Ctrl-C its process group got too, and a second signal must
  // not fall back to the default handler, which would end the process before the app has drained
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  for (const line of failureReportLines('reference service failed to start:', error)) console.error(line);
  process.exit(1);
});
