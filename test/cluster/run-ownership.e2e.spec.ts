/**
 * Runs belong to the principal that started them (issue 22), on the Postgres run store: one
 * instance, then two instances of the app on one database, where the run is started on one and
 * read, followed, cancelled and confirmed on the other (its owner is read from the store).
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AddressInfo } from 'node:net';
import { ClusterModule } from '../../src/cluster/cluster.module';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import type { Agent } from '../../src/runner/agent.types';
import { Runner } from '../../src/runner/runner';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { PostgresRunStoreProvider } from '../../src/runner/runs/stores/postgres/postgres-run-store.provider';
import { PostgresSessionService } from '../../src/services/sessions/postgres-session-service';
import { HttpClient } from '../e2e/support/http-client';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { approverMayConfirm, bearerPrincipal, deployAgent, describeRunOwnership } from '../support/run-ownership';

describe('run ownership over HTTP on the Postgres run store (issue 22)', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  /** One app instance named `instanceId` on the harness database, listening on a real socket. */
  async function instance(instanceId: string, agent: Agent): Promise<HttpClient> {
    const sessions = new PostgresSessionService(await harness().dataSource());
    await sessions.start();
    harness().track(() => sessions.close());
    const runner = new Runner({ appName: 'ownership', agent, sessionService: sessions });
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(harness().database.url)),
        ClusterModule.forRoot({ instanceId }),
        RunsModule.forRoot({ runners: [runner], resolvePrincipal: bearerPrincipal, authorizeRun: approverMayConfirm, store: PostgresRunStoreProvider }),
      ],
    }).compile();
    const app: INestApplication = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    harness().track(() => app.close());
    return new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  }

  describe('one instance', () => {
    describeRunOwnership(async () => {
      const { agent, executed } = deployAgent();
      const client = await instance('node-a', agent);
      return { owner: client, other: client, deploys: () => executed.length };
    });
  });

  describe('two instances: started on node-a, acted on from node-b', () => {
    describeRunOwnership(async () => {
      const executed: string[] = [];
      const owner = await instance('node-a', deployAgent(executed).agent);
      const other = await instance('node-b', deployAgent(executed, true).agent);
      return { owner, other, deploys: () => executed.length };
    });
  });
});
