import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { ReferenceAppModule, type ReferenceAppOptions } from '../../../src/reference-app/reference-app.module';
import { setUpReferenceApp } from '../../../src/reference-app/reference-app.setup';
import { HttpClient } from './http-client';
import { createFreshDatabase, type FreshDatabase } from '../../support/fresh-database';
import type { RecordingLogger } from './harness';

/** The demo users' headers (the reference service's default `REFERENCE_USERS`); `http` sends alice's unless told otherwise. */
export const AS_ALICE = Object.freeze({ authorization: 'Bearer alice-token' });
export const AS_BOB = Object.freeze({ authorization: 'Bearer bob-token' });
export const AS_OPERATOR = Object.freeze({ authorization: 'Bearer operator-token' });

/** A running reference service: the app, a client on its socket, and how to stop it. */
export interface ReferenceService {
  readonly app: INestApplication;
  readonly http: HttpClient;
}

/**
 * Boots the reference service as `npm start` does (same module, same app set-up) on `options.databaseUrl`,
 * listening on a free port of 127.0.0.1; `override` may replace providers before compilation.
 */
export async function startReferenceService(
  options: ReferenceAppOptions,
  logger: RecordingLogger,
  override: (builder: TestingModuleBuilder) => TestingModuleBuilder = (builder) => builder,
): Promise<ReferenceService> {
  const moduleRef = await override(Test.createTestingModule({ imports: [ReferenceAppModule.forRoot(options)] }))
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger, forceCloseConnections: true });
  setUpReferenceApp(app);
  await app.listen(0, '127.0.0.1');
  return { app, http: new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`, AS_ALICE) };
}

/**
 * Registers `beforeAll`/`afterAll` hooks that boot the reference service on a fresh migrated database
 * and tear both down; the returned object is filled in once the hooks ran.
 */
export function useReferenceService(logger: RecordingLogger): ReferenceService {
  const service = {} as { app: INestApplication; http: HttpClient };
  let database: FreshDatabase | undefined;
  beforeAll(async () => {
    database = await createFreshDatabase();
    Object.assign(service, await startReferenceService({ databaseUrl: database.url }, logger));
  }, 60_000);
  afterAll(async () => {
    await service.app?.close();
    await database?.drop();
  });
  return service;
}
