import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { runAgentRuntimeMigrations } from '../database/data-source.factory';
import { openProjectDatabase } from '../database/embedded/embedded-postgres';
import { classifyFailure } from '../database/postgres-failure';
import { runEvalGate } from '../evaluation/eval-gate';
import { toleranceOf } from '../evaluation/evaluation-http-params';
import { PostgresEvalStore } from '../evaluation/store/postgres-eval-store';
import { RunRegistry } from '../runner/runs/run-registry';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { ReferenceAppModule } from './reference-app.module';
import { REFERENCE_APP_NAME } from './reference-runners';

const USAGE = 'usage: npm run eval:gate -- --set <eval set id> --baseline <name> --agent <agent> [--tolerance 0..1]';

/**
 * `npm run eval:gate`: runs the set revision of a stored baseline through a candidate agent of the
 * reference service, against `DATABASE_URL` or the project's embedded server, and prints the
 * regression report. Exit 0 no regression, 1 regressed, 2 could not evaluate.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { set: { type: 'string' }, baseline: { type: 'string' }, agent: { type: 'string' }, tolerance: { type: 'string' } },
    strict: true,
  });
  const tolerance = toleranceArgument(values.tolerance);
  if (!values.set || !values.baseline || !values.agent || tolerance === null) {
    console.error(USAGE);
    return 2;
  }
  const database = await openProjectDatabase();
  try {
    await runAgentRuntimeMigrations(database.url);
    const app = await NestFactory.createApplicationContext(ReferenceAppModule.forRoot({ databaseUrl: database.url, logDecisions: false }), { logger: ['error'] });
    try {
      const store = new PostgresEvalStore(app.get(DataSource));
      const report = await runEvalGate(store, app.get(RunRegistry), {
        scope: { app: REFERENCE_APP_NAME },
        evalSetId: values.set,
        baseline: values.baseline,
        agent: values.agent,
        tolerance,
      });
      console.log(JSON.stringify(report, null, 2));
      return report.regressed ? 1 : 0;
    } finally {
      await app.close();
    }
  } finally {
    await database.stop();
  }
}

/** `--tolerance` as the compare route reads it (a plain decimal in 0..1), 0 when absent, `null` when bad. */
function toleranceArgument(text: string | undefined): number | null {
  try {
    return text === undefined ? 0 : toleranceOf(text);
  } catch {
    return null;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const report = AgentRuntimeError.isAgentRuntimeError(error)
      ? { regressed: null, error: error.code, details: error.details ?? null }
      : { regressed: null, error: 'could_not_evaluate', details: classifyFailure(error).codes };
    console.error(JSON.stringify(report));
    process.exit(2);
  },
);
