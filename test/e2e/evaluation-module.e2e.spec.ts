import type { DynamicModule, INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { EvalServiceHealthIndicator } from '../../src/evaluation/evaluation.health';
import { EvaluationModule, type EvaluationModuleRootOptions } from '../../src/evaluation/evaluation.module';
import { EvalService } from '../../src/evaluation/service/eval-service';
import { ReadinessService } from '../../src/health/readiness.service';
import { helperAgent } from '../../src/reference-app/reference-agents';
import type { Agent } from '../../src/runner/agent.types';
import { InMemorySessionService } from '../../src/services/sessions/in-memory-session-service';
import { Runner } from '../../src/runner/runner';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { EvaluationClient, expectError, referenceEvalRequest } from './support/evaluation-client';
import { RecordingLogger } from './support/harness';
import { HttpClient, type HttpResult } from './support/http-client';

/** One small app: a DataSource, `RunsModule` with the reference `helper` agent on in-memory sessions, and `evaluation`. */
interface EvalApp {
  readonly app: INestApplication;
  readonly http: HttpClient;
  readonly client: EvaluationClient;
  readonly logger: RecordingLogger;
}

/** `waiting`: its model never answers, so a job of it stays `running` until it is cancelled or its service stops. */
const waitingAgent: Agent = {
  name: 'waiting',
  model: {
    name: 'never-answers',
    generate: (_request, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
  },
};

/** A request for `waiting` over one case. */
const waitingRequest = (setId: string) => ({ set: { id: setId, version: '1', cases: [{ case_id: 'c', input: 'hello?', expected_output: 'hi' }] }, agent: 'waiting', metrics: [{ name: 'response_match' }] });

/** The DataSources the apps' TypeORM modules built, so that an app whose bootstrap failed leaves no pool open. */
const dataSources: DataSource[] = [];

function imports(url: string, evaluation: DynamicModule): DynamicModule[] {
  const sessionService = new InMemorySessionService();
  return [
    TypeOrmModule.forRootAsync({
      useFactory: () => ({ ...agentRuntimeDataSourceOptions(url), retryAttempts: 0 }),
      dataSourceFactory: async (options?: DataSourceOptions) => {
        const source = new DataSource(options as DataSourceOptions);
        dataSources.push(source);
        return source.initialize();
      },
    }),
    RunsModule.forRoot({ runners: [helperAgent, waitingAgent].map((agent) => new Runner({ appName: 'eval-module-e2e', agent, sessionService })) }),
    evaluation,
  ];
}

async function startApp(url: string, evaluation: DynamicModule): Promise<EvalApp> {
  const logger = new RecordingLogger();
  const moduleRef = await Test.createTestingModule({ imports: imports(url, evaluation) }).setLogger(logger).compile();
  const app = moduleRef.createNestApplication({ logger, forceCloseConnections: true });
  await app.listen(0, '127.0.0.1');
  const http = new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  return { app, http, client: new EvaluationClient(http), logger };
}

/** `EvaluationModule.forRoot(options)` with one preparation thread (two cores run several apps here). */
const evaluationModule = (options: EvaluationModuleRootOptions): DynamicModule =>
  EvaluationModule.forRoot({ ...options, service: { preparation: { threads: 1 }, ...options.service } });

/** What bootstrap of an app with `evaluation` fails with (it must fail). */
async function bootstrapFailure(url: string, evaluation: () => DynamicModule): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({ imports: imports(url, evaluation()) }).setLogger(new RecordingLogger()).compile();
    await moduleRef.init().finally(() => moduleRef.close().catch(() => undefined));
  } catch (error) {
    return error;
  }
  throw new Error('bootstrap succeeded');
}

/** Every `/evaluations` route once. */
function everyRoute(client: EvaluationClient): Array<Promise<HttpResult>> {
  const jobId = `eval-${'0'.repeat(32)}`;
  return [
    client.submit(referenceEvalRequest()),
    client.list(),
    client.list('?limit=1'),
    client.status(jobId),
    client.result(jobId),
    client.cancel(jobId),
    client.putBaseline('reference-helper', 'main', { job_id: jobId }),
    client.getBaseline('reference-helper', 'main'),
    client.compare(jobId, 'baseline=main'),
  ];
}

describe('EvaluationModule in small apps of its own (spec 05 §10)', () => {
  const apps: EvalApp[] = [];
  const databases: FreshDatabase[] = [];
  const database = async (): Promise<string> => {
    const fresh = await createFreshDatabase();
    databases.push(fresh);
    return fresh.url;
  };
  const started = async (url: string, evaluation: DynamicModule): Promise<EvalApp> => {
    const app = await startApp(url, evaluation);
    apps.push(app);
    return app;
  };

  afterEach(async () => {
    for (const app of apps.splice(0)) {
      app.http.destroyAll();
      await app.app.close();
    }
    for (const source of dataSources.splice(0)) if (source.isInitialized) await source.destroy().catch(() => undefined);
  });
  afterAll(async () => {
    for (const fresh of databases) await fresh.drop();
  });

  test('without resolveScope every /evaluations route answers 404, though the service runs', async () => {
    const { client, app } = await started(await database(), evaluationModule({}));
    for (const answer of everyRoute(client)) expectError(await answer, 404, 'not_found');
    expect(await app.get(EvalServiceHealthIndicator).isHealthy()).toMatchObject({ evaluation: { status: 'up', state: 'running' } });
  });

  test('with resolvePrincipal the scope is the principal: a job of alice is not_found for bob, and no principal is 401 unauthenticated', async () => {
    const resolvePrincipal = (request: unknown) => {
      const user = (request as { headers: Record<string, string | undefined> }).headers['x-user'];
      return user ? { id: user } : null;
    };
    const { http } = await started(await database(), evaluationModule({ resolvePrincipal }));
    const alice = new EvaluationClient(new HttpClient(http.baseUrl, { 'x-user': 'alice' }));
    const bob = new EvaluationClient(new HttpClient(http.baseUrl, { 'x-user': 'bob' }));
    const jobId = await alice.submitted(referenceEvalRequest());
    expect((await alice.status(jobId)).status).toBe(200);
    expectError(await bob.status(jobId), 404, 'not_found');
    expect((await bob.list()).body.jobs).toEqual([]);
    for (const answer of everyRoute(new EvaluationClient(http))) expectError(await answer, 401, 'unauthenticated');
  });

  test('a resolveScope that throws, rejects or returns anything but {app} answers 401 invalid_eval_scope on every route', async () => {
    const canary = `canary-${randomBytes(6).toString('hex')}`;
    const scopes: Record<string, () => unknown> = {
      throws: () => {
        throw new Error(`no tenant ${canary}`);
      },
      rejects: () => Promise.reject(new Error(`no tenant ${canary}`)),
      empty: () => ({ app: '' }),
      string: () => 'tenant-a',
      null: () => null,
      array: () => ['tenant-a'],
      number: () => ({ app: 7 }),
      extra: () => ({ app: 'tenant-a', role: canary }),
      nul: () => ({ app: `tenant\u0000${canary}` }),
      long: () => ({ app: 'x'.repeat(257) }),
      resolvesEmpty: () => Promise.resolve({ app: '' }),
      a: () => ({ app: 'tenant-a' }),
      b: () => Promise.resolve({ app: 'tenant-b' }),
    };
    const resolveScope = (request: unknown) => scopes[String((request as { headers: Record<string, string> }).headers['x-scope'])]() as { app: string };
    const { http, logger } = await started(await database(), evaluationModule({ resolveScope }));
    const as = (scope: string) => new EvaluationClient(withHeader(http, 'x-scope', scope));

    for (const scope of Object.keys(scopes).filter((name) => name !== 'a' && name !== 'b')) {
      for (const answer of everyRoute(as(scope))) {
        const result = await answer;
        expect(result.body).toEqual({ status_code: 401, error: 'Unauthorized', code: 'invalid_eval_scope' });
        expect(result.text).not.toContain(canary);
      }
    }
    expect(logger.entries.map((entry) => entry.text).join('\n')).not.toContain(canary);

    // apps are isolated: tenant-b neither sees nor touches tenant-a's job
    const tenantA = as('a');
    const jobId = await tenantA.submitted(referenceEvalRequest());
    expect(await tenantA.waitForPhase(jobId)).toMatchObject({ phase: 'completed', scope: { app: 'tenant-a' } });
    const tenantB = as('b');
    expectError(await tenantB.status(jobId), 404, 'not_found');
    expectError(await tenantB.result(jobId), 404, 'not_found');
    expectError(await tenantB.cancel(jobId), 404, 'not_found');
    expectError(await tenantB.putBaseline('reference-helper', 'main', { job_id: jobId }), 404, 'not_found');
    expect((await tenantB.list()).body).toEqual({ jobs: [], next_cursor: null, has_more: false });
    expect((await tenantA.list()).body.jobs.map((job: { job_id: string }) => job.job_id)).toEqual([jobId]);
  });

  test('a second app on the same database stands by (readiness down, 503 with Retry-After) and takes over on a standby retry once the first closes', async () => {
    const url = await database();
    const resolveScope = () => ({ app: 'shared' });
    const first = await started(url, evaluationModule({ resolveScope }));
    const jobId = await first.client.submitted(referenceEvalRequest());
    expect(await first.client.waitForPhase(jobId)).toMatchObject({ phase: 'completed' });

    const standbyAt = Date.now();
    const second = await started(url, evaluationModule({ resolveScope }));
    expect(second.app.get(EvalService).state).toBe('standby');
    const report = await second.app.get(ReadinessService).check();
    expect(report.status).toBe('error');
    expect(report.error.evaluation).toMatchObject({ status: 'down', state: 'standby' });
    expect((await first.app.get(ReadinessService).check()).info.evaluation).toMatchObject({ status: 'up', state: 'running', identity_source: expect.any(String) });
    for (const answer of [second.client.status(jobId), second.client.list(), second.client.submit(referenceEvalRequest()), second.client.getBaseline('reference-helper', 'main')]) {
      const result = await answer;
      expectError(result, 503, 'eval_service_unavailable', { state: 'standby' });
      expect(result.headers['retry-after']).toBe('1');
    }

    apps.splice(apps.indexOf(first), 1);
    first.http.destroyAll();
    await first.app.close();

    let taken: HttpResult | undefined;
    while (Date.now() - standbyAt < 12_000) {
      const answer = await second.client.status(jobId);
      if (answer.status === 200) {
        taken = answer;
        break;
      }
      expectError(answer, 503, 'eval_service_unavailable', { state: 'standby' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(taken?.body.job).toMatchObject({ job_id: jobId, phase: 'completed', scope: { app: 'shared' } });
    // the standby retries back off 1 s, 2 s, 4 s... (at 1 s, 3 s, 7 s): the owner closed at once, so the 1 s or 2 s retry won
    const takenAfter = Date.now() - standbyAt;
    expect(takenAfter).toBeGreaterThanOrEqual(1_000);
    expect(takenAfter).toBeLessThan(6_000);
    expect((await second.app.get(ReadinessService).check()).info.evaluation).toMatchObject({ status: 'up', state: 'running' });
    const next = await second.client.submitted(referenceEvalRequest());
    expect(await second.client.waitForPhase(next)).toMatchObject({ phase: 'completed' });
    expect((await second.client.list()).body.jobs.map((job: { job_id: string }) => job.job_id)).toEqual([jobId, next]);
  }, 30_000);

  test('a full queue answers 429 evaluation_queue_full with Retry-After and writes nothing', async () => {
    const { client } = await started(await database(), evaluationModule({ resolveScope: () => ({ app: 'q' }), service: { maxConcurrency: 1, maxQueue: 1 } }));
    const running = await client.submit(waitingRequest('w1'));
    const queued = await client.submit(waitingRequest('w2'));
    expect([running.body.job.phase, queued.body.job.phase]).toEqual(['running', 'queued']);
    const full = await client.submit(waitingRequest('w3'));
    expectError(full, 429, 'evaluation_queue_full');
    expect(full.headers['retry-after']).toBe('1');
    expect((await client.list()).body.jobs.map((job: { job_id: string }) => job.job_id)).toEqual([running.body.job.job_id, queued.body.job.job_id]);
    expect((await client.cancel(running.body.job.job_id)).status).toBe(202);
    expect(await client.waitForPhase(running.body.job.job_id)).toMatchObject({ phase: 'cancelled', reason: 'user_cancelled' });
    // the freed slot starts the head of the queue
    expect(await client.waitForPhase(queued.body.job.job_id, ['running'])).toMatchObject({ revision: 1 });
    expect((await client.submit(waitingRequest('w3'))).body.job).toMatchObject({ phase: 'queued' });
  });

  test('closing an app abandons its running and queued jobs without writing; the next start recovers them as failed and starts none', async () => {
    const url = await database();
    const resolveScope = () => ({ app: 'restart' });
    const first = await started(url, evaluationModule({ resolveScope, service: { maxConcurrency: 1 } }));
    const running = await first.client.submitted(waitingRequest('r1'));
    const queued = await first.client.submitted(waitingRequest('r2'));
    expect((await first.client.status(queued)).body.job.phase).toBe('queued');
    apps.splice(apps.indexOf(first), 1);
    first.http.destroyAll();
    await first.app.close();

    const second = await started(url, evaluationModule({ resolveScope }));
    for (const jobId of [running, queued]) {
      expect((await second.client.status(jobId)).body.job).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted' });
      expectError(await second.client.result(jobId), 409, 'evaluation_job_terminal', { phase: 'failed', reason: 'evaluation_service_restarted' });
    }
    expect((await second.app.get(ReadinessService).check()).info.evaluation).toMatchObject({ status: 'up', recovered_jobs: 2, active_jobs: 0, queued_jobs: 0 });
  });

  describe('bad module options fail bootstrap', () => {
    let url: string;
    beforeAll(async () => {
      url = await database();
    });

    test.each<[string, () => DynamicModule, string, Record<string, unknown> | undefined]>([
      ['an unknown module option', () => EvaluationModule.forRoot({ scope: 'x' } as never), 'unknown_eval_service_options', { field: 'scope' }],
      ['a resolveScope that is not a function', () => EvaluationModule.forRoot({ resolveScope: 'reference' } as never), 'invalid_eval_service_options', { field: 'resolveScope' }],
      ['service options that are not an object', () => EvaluationModule.forRoot({ service: 'fast' } as never), 'invalid_eval_service_options', { field: 'service' }],
      ['an unknown service option', () => EvaluationModule.forRoot({ service: { maxConcurency: 2 } as never }), 'unknown_eval_service_options', { field: 'maxConcurency' }],
      ['maxConcurrency 0', () => EvaluationModule.forRoot({ service: { maxConcurrency: 0 } }), 'invalid_eval_service_options', { field: 'maxConcurrency' }],
      ['maxQueue above 100,000', () => EvaluationModule.forRoot({ service: { maxQueue: 100_001 } }), 'invalid_eval_service_options', { field: 'maxQueue' }],
      ['an unknown ownership', () => EvaluationModule.forRoot({ service: { ownership: 'steal' as never } }), 'invalid_eval_service_options', { field: 'ownership' }],
      ['a store among the service options', () => EvaluationModule.forRoot({ service: { store: {} } as never }), 'store_is_managed', undefined],
      ['a worker that is neither local nor an object', () => EvaluationModule.forRoot({ service: { worker: 42 as never } }), 'invalid_eval_worker', undefined],
      ['an unknown store option', () => EvaluationModule.forRoot({ store: { tables: 5 } as never }), 'unknown_eval_store_options', { field: 'tables' }],
      ['an unknown option from forRootAsync', () => EvaluationModule.forRootAsync({ useFactory: async () => ({ resolveScope: () => ({ app: 'a' }), retries: 1 }) as never }), 'unknown_eval_service_options', { field: 'retries' }],
      ['a bad service option from forRootAsync', () => EvaluationModule.forRootAsync({ useFactory: () => ({ service: { callTimeoutMs: 0 } }) }), 'invalid_eval_service_options', { field: 'callTimeoutMs' }],
    ])('%s', async (_name, evaluation, code, details) => {
      const error = await bootstrapFailure(url, evaluation);
      expect(error).toMatchObject({ name: 'EvalServiceError', code });
      if (details !== undefined) expect((error as { details?: unknown }).details).toEqual(details);
      expect(String((error as Error).message)).not.toMatch(/reference|fast|steal/);
    });

    test('after the refusals the database is free: a good app starts, owns the store and serves', async () => {
      const { client, app } = await started(url, evaluationModule({ resolveScope: () => ({ app: 'after' }) }));
      expect(app.get(EvalService).state).toBe('running');
      const jobId = await client.submitted(referenceEvalRequest());
      expect(await client.waitForPhase(jobId)).toMatchObject({ phase: 'completed' });
    });
  });
});

/** A client whose every request carries `name: value`. */
function withHeader(http: HttpClient, name: string, value: string): HttpClient {
  const client = new HttpClient(http.baseUrl);
  const send = client.send.bind(client);
  client.send = (path, options = {}) => send(path, { ...options, headers: { ...options.headers, [name]: value } });
  return client;
}
