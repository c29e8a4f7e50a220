import { Controller, Get, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { ClusterError } from '../../src/cluster/cluster.errors';
import { AgentRuntimeExceptionFilter } from '../../src/http/agent-runtime-exception.filter';
import { LedgerError } from '../../src/ledger/ledger.errors';
import { RuntimePolicyError } from '../../src/policy/runtime-policy.errors';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import { RecordingLogger } from './support/harness';
import { HttpClient } from './support/http-client';

const CANARY = 'canary-91b2-secret';

@Controller('throw')
class ThrowingController {
  @Get('type-error')
  typeError(): never {
    throw new TypeError(`cannot read ${CANARY}`);
  }

  @Get('ledger')
  ledger(): never {
    throw new LedgerError('transaction_aborted', { sqlstate: '40001', socket_error: null });
  }

  @Get('policy')
  policy(): never {
    throw new RuntimePolicyError('runtime_policy_audit_persistence_failed', { sqlstate: '08006' });
  }

  @Get('conflict')
  conflict(): never {
    throw new LedgerError('invocation_owned');
  }

  @Get('cluster')
  cluster(): never {
    throw new ClusterError('cluster_unavailable', { sqlstate: null, errno: 'ECONNREFUSED' });
  }

  @Get('services')
  services(): Promise<never> {
    return Promise.reject(new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: '57P01' }));
  }

  @Get('services-client')
  servicesClient(): never {
    throw new RuntimeServiceError('artifact_too_large', { limit: 'maxArtifactBytes' });
  }
}

describe('AgentRuntimeExceptionFilter', () => {
  let app: INestApplication;
  let http: HttpClient;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [ThrowingController], providers: [{ provide: APP_FILTER, useClass: AgentRuntimeExceptionFilter }] })
      .setLogger(logger)
      .compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
    http = new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    await app?.close();
  });

  const linesOf = (text: string) => logger.entries.filter((entry) => entry.level !== 'log').map((entry) => entry.text).filter((line) => line.includes(text));

  it('answers an unknown error 500 internal_error and logs its name only, once, without message or stack', async () => {
    const result = await http.get('/throw/type-error').result;
    expect(result.body).toEqual({ status_code: 500, error: 'Internal Server Error', code: 'internal_error' });
    const lines = linesOf('route=GET /throw/type-error');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^500 internal_error error=TypeError code=null route=GET \/throw\/type-error\s+AgentRuntimeHttp$/);
    expect(logger.entries.map((entry) => entry.text).join('\n')).not.toContain(CANARY);
  });

  it("maps a module's error by its table, with Retry-After for an outage, and logs the details that never hold input", async () => {
    const ledger = await http.get('/throw/ledger').result;
    expect(ledger.status).toBe(503);
    expect(ledger.headers['retry-after']).toBe('1');
    expect(ledger.body).toEqual({ status_code: 503, error: 'Service Unavailable', code: 'transaction_aborted' });
    expect(linesOf('route=GET /throw/ledger')).toEqual(['503 transaction_aborted sqlstate=40001 socket_error=null route=GET /throw/ledger AgentRuntimeHttp']);
    const policy = await http.get('/throw/policy').result;
    expect({ status: policy.status, retry: policy.headers['retry-after'], code: policy.body.code }).toEqual({ status: 503, retry: '1', code: 'runtime_policy_audit_persistence_failed' });
  });

  it.each([
    ['cluster', 'cluster_unavailable', 'sqlstate=null errno=ECONNREFUSED'],
    ['services', 'runtime_service_store_unavailable', 'sqlstate=57P01'],
  ])('answers /throw/%s (%s, no table in the filter) 503 with Retry-After, logged as one line', async (route, code, facts) => {
    const result = await http.get(`/throw/${route}`).result;
    expect(result.status).toBe(503);
    expect(result.headers['retry-after']).toBe('1');
    expect(result.body).toEqual({ status_code: 503, error: 'Service Unavailable', code });
    expect(linesOf(`route=GET /throw/${route} `)).toEqual([`503 ${code} ${facts} route=GET /throw/${route} AgentRuntimeHttp`]);
  });

  it('answers a 4xx of the table without a log line or Retry-After', async () => {
    const services = await http.get('/throw/services-client').result;
    expect(services.body).toEqual({ status_code: 413, error: 'Payload Too Large', code: 'artifact_too_large', details: { limit: 'maxArtifactBytes' } });
    expect(services.headers['retry-after']).toBeUndefined();
    expect(linesOf('/throw/services-client')).toEqual([]);

    const result = await http.get('/throw/conflict').result;
    expect(result.body).toEqual({ status_code: 409, error: 'Conflict', code: 'invocation_owned' });
    expect(result.headers['retry-after']).toBeUndefined();
    expect(linesOf('/throw/conflict')).toEqual([]);
  });
});
