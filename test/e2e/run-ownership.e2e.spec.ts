/**
 * Runs belong to the principal that started them (issue 22), in memory mode: one Nest app with
 * `RunsModule`, a bearer-token `resolvePrincipal` and an approver `authorizeRun`, over a real socket.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { Runner } from '../../src/runner/runner';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { InMemorySessionService } from '../../src/services/sessions/in-memory-session-service';
import { approverMayConfirm, bearerPrincipal, deployAgent, describeRunOwnership, OWNERSHIP_AGENT } from '../support/run-ownership';
import { HttpClient } from './support/http-client';

describe('run ownership over HTTP, in memory (issue 22)', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  async function listen(imports: Parameters<typeof Test.createTestingModule>[0]['imports']): Promise<HttpClient> {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  }

  describeRunOwnership(async () => {
    const { agent, executed } = deployAgent();
    const runner = new Runner({ appName: 'ownership', agent, sessionService: new InMemorySessionService() });
    const client = await listen([RunsModule.forRoot({ runners: [runner], resolvePrincipal: bearerPrincipal, authorizeRun: approverMayConfirm })]);
    return { owner: client, other: client, deploys: () => executed.length };
  });

  it('without resolvePrincipal (and without allowAnonymous) every /runs route answers 404 not_found', async () => {
    const runner = new Runner({ appName: 'ownership', agent: deployAgent().agent, sessionService: new InMemorySessionService() });
    const client = await listen([RunsModule.forRoot({ runners: [runner] })]);
    const notFound = { status: 404, body: { status_code: 404, error: 'Not Found', code: 'not_found' } };
    expect(await client.send('/runs', { method: 'POST', body: { agent: OWNERSHIP_AGENT, message: 'hi' } }).result).toMatchObject(notFound);
    expect(await client.send('/runs/run-x').result).toMatchObject(notFound);
    expect(await client.send('/runs/run-x/events').result).toMatchObject(notFound);
    expect(await client.send('/runs/run-x/cancel', { method: 'POST', body: {} }).result).toMatchObject(notFound);
  });

  it('allowAnonymous: every request without a principal is the principal anonymous, which owns the runs it starts', async () => {
    const sessions = new InMemorySessionService();
    const runner = new Runner({ appName: 'ownership', agent: deployAgent().agent, sessionService: sessions });
    const client = await listen([RunsModule.forRoot({ runners: [runner], allowAnonymous: true })]);
    const started = await client.send('/runs', { method: 'POST', body: { agent: OWNERSHIP_AGENT, message: 'hi' } }).result;
    expect(started.status).toBe(202);
    expect((await client.send(`/runs/${started.body.run_id}`).result).status).toBe(200);
    expect(await sessions.getSession({ appName: 'ownership', userId: 'anonymous', sessionId: started.body.session_id })).toBeDefined();
  });
});
