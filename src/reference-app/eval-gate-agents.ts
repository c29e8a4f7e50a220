import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { EvalGateAgentsFactory } from '../evaluation/eval-gate';
import { RunRegistry } from '../runner/runs/run-registry';
import { ReferenceAppModule } from './reference-app.module';

/**
 * The candidate agents of `npm run eval:gate`: the reference service's registry, from an application
 * context of the reference app on the gate's database (`nest-agent-runtime eval-gate --app reference
 * --agents dist/src/reference-app/eval-gate-agents.js`).
 */
export const evalGateAgents: EvalGateAgentsFactory = async ({ databaseUrl }) => {
  const app = await NestFactory.createApplicationContext(ReferenceAppModule.forRoot({ databaseUrl, logDecisions: false }), { logger: ['error'] });
  return { registry: app.get(RunRegistry), close: () => app.close() };
};
