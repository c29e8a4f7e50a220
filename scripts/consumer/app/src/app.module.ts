import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentRuntimeExceptionFilter } from 'nest-agent-runtime';
import { AdmissionModule } from 'nest-agent-runtime/admission';
import { agentRuntimeDataSourceOptions, DatabaseHealthIndicator } from 'nest-agent-runtime/database';
import { MetricsModule } from 'nest-agent-runtime/observability';
import { RuntimePolicyModule } from 'nest-agent-runtime/policy';
import { RunsModule } from 'nest-agent-runtime/runner';
import { AgentsController, ToolsController } from './agents.controller.js';
import { HealthController } from './health.controller.js';
import { helperRunsOptions } from './helper-runner.js';

/** An existing Nest app that adds the runtime: admission, policy with a Postgres audit log, runs, health and metrics. */
@Module({
  imports: [
    EventEmitterModule.forRoot(),
    TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(process.env.DATABASE_URL, { modules: ['audit-log'] })),
    AdmissionModule.forRoot({ globalLimit: 8, agentLimits: { support: 2 }, overflow: 'queue' }),
    RuntimePolicyModule.forRoot({
      policy: { agents: { allow: ['support', 'helper'] }, tools: { allow: ['search'], deny: ['shell'] } },
      auditLog: 'postgres',
    }),
    RunsModule.forRootAsync(helperRunsOptions),
    MetricsModule.forRoot(),
  ],
  controllers: [HealthController, AgentsController, ToolsController],
  providers: [{ provide: APP_FILTER, useClass: AgentRuntimeExceptionFilter }, DatabaseHealthIndicator],
})
export class AppModule {}
