/**
 * HTTP end-to-end tests of the admission module's lifecycle (spec 01 §5.9, §12; conventions
 * "Health and shutdown"): drain on `app.close()` with readiness going down, a drain that times out,
 * start-up validation, `forRootAsync` variants and the optional `EventEmitter2`.
 * Every test runs for the local and the cluster controller (`ADMISSION_VARIANTS` of the harness, spec 08 §3);
 * the few that are process-local say why they are local only.
 */
import { Controller, Get, Inject, Injectable, Module } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import { Admission, AdmissionPermit } from '../../src/admission/admission.decorator';
import { AdmissionError } from '../../src/admission/admission.errors';
import { AdmissionModule, type AdmissionOptionsFactory } from '../../src/admission/admission.module';
import type { Permit } from '../../src/admission/permit';
import { ADMISSION_VARIANTS, BASE_CONFIG, RecordingLogger, admissionControllerClass, admissionModeOf, localOnly, settleTime, useApps, waitFor, type TestApp } from './support/harness';
import { Probe } from './support/probe';
import { agentParam, WorkController } from './support/routes';

const started = (t: TestApp, key: string) => waitFor(() => t.probe.started.includes(key), `handler ${key} to start`);
const DRAINING_BODY = { status_code: 503, error: 'Service Unavailable', code: 'deployment_draining' };

// ---- fixtures of the module start-up tests -----------------------------------------------------

const LIMITS = Symbol('LIMITS');

@Module({ providers: [{ provide: LIMITS, useValue: { global: 5, perAgent: 1, queue: 7 } }], exports: [LIMITS] })
class LimitsModule {}

@Injectable()
class ClassOptions implements AdmissionOptionsFactory {
  constructor(@Inject(LIMITS) private readonly limits: { global: number; perAgent: number; queue: number }) {}
  async createAdmissionOptions(): Promise<AdmissionConfig> {
    return { globalLimit: this.limits.global + 1, defaultAgentLimit: this.limits.perAgent, maxQueue: this.limits.queue + 1, overflow: 'reject' };
  }
}

@Injectable()
class ExistingOptions implements AdmissionOptionsFactory {
  createAdmissionOptions(): AdmissionConfig {
    return { globalLimit: 7, defaultAgentLimit: 1, maxQueue: 9, overflow: 'reject' };
  }
}

@Module({ imports: [LimitsModule], providers: [ExistingOptions], exports: [ExistingOptions] })
class ExistingOptionsModule {}

/** A feature module that does not import AdmissionModule: the global module must serve it. */
@Controller('feature')
class FeatureController {
  @Get(':agent')
  @Admission(agentParam)
  admitted(@AdmissionPermit() permit: Permit): { agent_id: string } {
    return { agent_id: permit.agentId };
  }
}

@Module({ controllers: [FeatureController] })
class FeatureModule {}

function configErrorOf(error: unknown): AdmissionError {
  expect(error).toBeInstanceOf(AdmissionError);
  const admissionError = error as AdmissionError;
  expect(admissionError.code).toBe('invalid_admission_control_config');
  return admissionError;
}

/** Every string the details carry, flattened. */
function detailStrings(error: AdmissionError): string[] {
  return Object.values(error.details ?? {}).flatMap((value) => (Array.isArray(value) ? value : [value])).filter((value): value is string => typeof value === 'string');
}

describe.each(ADMISSION_VARIANTS)('%s controller', (variant) => {
  describe('admission over HTTP: drain on shutdown', () => {
    const start = useApps(variant);

    it('fails queued requests, turns readiness down, refuses new requests and closes once the active handler finishes', async () => {
      const t = await start({ shutdownHooks: true });

      const readyBefore = await t.http.get('/health/ready').result;
      expect(readyBefore.status).toBe(200);
      expect(readyBefore.body.info.admission).toEqual({ status: 'up', draining: false, active: 0, queued: 0, available: 16 });

      const long = t.http.get('/work/solo/queue/long');
      await started(t, 'long');
      const queued = t.http.get('/work/solo/queue/queued');
      await waitFor(() => t.queuedOf('solo') === 1, 'a request to be queued');

      let closed = false;
      const closing = t.close().then(() => {
        closed = true;
      });

      const failed = await queued.result;
      expect(failed.status).toBe(503);
      expect(failed.body).toEqual(DRAINING_BODY);
      expect(failed.headers['retry-after']).toBe('1');
      expect(t.status()).toMatchObject({ draining: true, active: 1, queue_length: 0 });
      expect(typeof t.status().drain_started_at).toBe('number');

      const ready = await t.http.get('/health/ready').result;
      expect(ready.status).toBe(503);
      // terminus reports 'shutting_down' once its own shutdown hook ran, 'error' before; either way admission is named
      expect(['error', 'shutting_down']).toContain(ready.body.status);
      expect(ready.body.error).toEqual({ admission: { status: 'down', draining: true, active: 1, queued: 0, available: 15 } });
      expect(ready.text).not.toMatch(/Error:|at .*\.ts/);

      const live = await t.http.get('/health/live').result;
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok' });

      for (const path of ['/work/other/queue/fresh', '/work/other/reject/fresh2', '/work/solo/default/fresh3']) {
        const refused = await t.http.get(path).result;
        expect(refused.status).toBe(503);
        expect(refused.body).toEqual(DRAINING_BODY);
        expect(refused.headers['retry-after']).toBe('1');
      }
      expect(t.probe.started).toEqual(['long']);

      // close waits for the active handler
      await settleTime(150);
      expect(closed).toBe(false);
      expect(long.settled()).toBe(false);

      t.probe.finish('long');
      const done = await long.result;
      expect(done.status).toBe(200);
      expect(done.body).toEqual({ key: 'long', agent_id: 'solo', permit_id_ok: true });
      await closing;
      expect(closed).toBe(true);
      expect(t.status()).toMatchObject({ draining: true, active: 0, queue_length: 0 });
      // refusals while draining emit nothing; the queued one failed through exactly one row
      expect(t.outcomes()).toEqual(['granted', 'queued', 'deployment_draining', 'released']);
      expect(t.logger.ofLevel('warn')).toEqual([]);
    });

    it('readiness names admission as down as soon as admission drains (before any terminus shutdown), liveness stays 200', async () => {
      const t = await start();
      const held = t.http.get('/work/pair/default/held');
      await started(t, 'held');

      t.admission.beginDrain();
      const ready = await t.http.get('/health/ready').result;
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({
        status: 'error',
        info: {},
        error: { admission: { status: 'down', draining: true, active: 1, queued: 0, available: 15 } },
        details: { admission: { status: 'down', draining: true, active: 1, queued: 0, available: 15 } },
      });
      expect((await t.http.get('/health/live').result).status).toBe(200);

      // the active request is not disturbed by the drain
      expect(t.probe.aborted.has('held')).toBe(false);
      expect(t.status().active).toBe(1);
      t.probe.finish('held');
      expect((await held.result).status).toBe(200);
      const after = await t.http.get('/health/ready').result;
      expect(after.status).toBe(503);
      expect(after.body.error.admission).toEqual({ status: 'down', draining: true, active: 0, queued: 0, available: 16 });
    });

    // after the drain times out, shutdown stops the cluster controller, which revokes what the instance still holds (its stop())
    localOnly(variant)('a drain that times out logs a warning with the active count and close still completes', async () => {
      const t = await start({ admission: { ...BASE_CONFIG, drainTimeoutMs: 200 }, shutdownHooks: true, forceCloseConnections: true });
      const long = t.http.get('/work/solo/queue/stuck');
      await started(t, 'stuck');

      const startedAt = Date.now();
      await t.close();
      const elapsed = Date.now() - startedAt;
      expect(elapsed).toBeGreaterThanOrEqual(150);
      expect(elapsed).toBeLessThan(10_000);

      const warnings = t.logger.ofLevel('warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/drain/i);
      expect(warnings[0]).toMatch(/\b1\b/);
      // the timeout revokes nothing: the handler has not finished and still holds its permit
      expect(t.probe.settled).toEqual([]);
      expect(t.status()).toMatchObject({ draining: true, active: 1 });

      // the handler settles later and still returns its slot (the forced close dropped its connection)
      t.probe.finish('stuck');
      await waitFor(() => t.status().active === 0, 'the late handler to release');
      expect(t.probe.settled).toEqual(['stuck']);
      await expect(long.result).rejects.toThrow();
    });
  });

  describe('admission module start-up', () => {
    const start = useApps(variant);

    // the options are validated alike in both modes; in cluster mode the failure comes after ClusterModule's instance took
    // its lock, and Nest closes nothing of a module that failed to compile, so a cluster variant would leak that instance
    localOnly(variant)('forRoot with invalid options stops bootstrap with invalid_admission_control_config naming every bad option', async () => {
      const compiling = Test.createTestingModule({ imports: [AdmissionModule.forRoot({ globalLimit: 0, maxQueue: -1 })] })
        .setLogger(new RecordingLogger())
        .compile();
      const error = configErrorOf(await compiling.catch((caught: unknown) => caught));
      expect(detailStrings(error)).toEqual(expect.arrayContaining(['globalLimit', 'maxQueue']));
      expect(detailStrings(error)).not.toContain('defaultAgentLimit');
      // names only, never the offending values
      expect(JSON.stringify(error.details)).not.toContain('-1');
      expect(error.message).not.toContain('-1');
    });

    // local only, as the one above
    localOnly(variant)('forRootAsync with a factory returning invalid options also stops bootstrap', async () => {
      const compiling = Test.createTestingModule({
        imports: [AdmissionModule.forRootAsync({ useFactory: async () => ({ overflow: 'sometimes' as never, drainTimeoutMs: 600_001 }) })],
      })
        .setLogger(new RecordingLogger())
        .compile();
      const error = configErrorOf(await compiling.catch((caught: unknown) => caught));
      expect(detailStrings(error)).toEqual(expect.arrayContaining(['overflow', 'drainTimeoutMs']));
      expect(JSON.stringify(error.details)).not.toContain('sometimes');
    });

    it('forRootAsync without useFactory, useClass or useExisting is refused with invalid_admission_control_config', () => {
      let caught: unknown;
      try {
        AdmissionModule.forRootAsync({ ...admissionModeOf(variant) });
      } catch (error) {
        caught = error;
      }
      configErrorOf(caught);
    });

    it('ignores unknown option keys', async () => {
      const t = await start({ admission: { ...BASE_CONFIG, notAnOption: true } as AdmissionConfig });
      expect(t.status().global_limit).toBe(16);
    });

    describe.each([
      {
        style: 'useFactory + inject + imports',
        module: () =>
          AdmissionModule.forRootAsync({
            ...admissionModeOf(variant),
            imports: [LimitsModule],
            inject: [LIMITS],
            useFactory: (limits: { global: number; perAgent: number; queue: number }) => ({
              globalLimit: limits.global,
              defaultAgentLimit: limits.perAgent,
              maxQueue: limits.queue,
              overflow: 'reject' as const,
            }),
          }),
        expected: { global_limit: 5, max_queue: 7 },
      },
      {
        style: 'useClass (async factory method, injected dependency)',
        module: () => AdmissionModule.forRootAsync({ ...admissionModeOf(variant), imports: [LimitsModule], useClass: ClassOptions }),
        expected: { global_limit: 6, max_queue: 8 },
      },
      {
        style: 'useExisting',
        module: () => AdmissionModule.forRootAsync({ ...admissionModeOf(variant), imports: [ExistingOptionsModule], useExisting: ExistingOptions }),
        expected: { global_limit: 7, max_queue: 9 },
      },
    ])('forRootAsync: $style', ({ module, expected }) => {
      it('provides a working controller with the configured limits', async () => {
        const t = await start({ admissionModule: module(), controllers: [WorkController], imports: [FeatureModule] });
        expect(t.status()).toMatchObject({ ...expected, overflow: 'reject', active: 0, draining: false });

        // defaultAgentLimit 1 from the factory (BASE_CONFIG would allow 2)
        const holder = t.http.get('/work/agent-x/default/h');
        await started(t, 'h');
        const refused = await t.http.get('/work/agent-x/default/r').result;
        expect(refused.status).toBe(429);
        expect(refused.body.code).toBe('concurrency_limit_reached');
        t.probe.finish('h');
        expect((await holder.result).status).toBe(200);

        // the module is global: a feature module that does not import it is admitted too
        const feature = await t.http.get('/feature/agent-y').result;
        expect(feature.status).toBe(200);
        expect(feature.body).toEqual({ agent_id: 'agent-y' });
        await waitFor(() => t.status().active === 0, 'every slot to come back');
        expect(t.outcomes()).toEqual(['granted', 'rejected', 'released', 'granted', 'released']);
      });
    });

    it('works without EventEmitterModule (EventEmitter2 is optional)', async () => {
      const t = await start({ eventEmitter: false, admission: { ...BASE_CONFIG, defaultAgentLimit: 1 } });
      expect(() => t.app.get(EventEmitter2, { strict: false })).toThrow();

      const holder = t.http.get('/work/quiet/reject/h');
      await started(t, 'h');
      expect(t.activeOf('quiet')).toBe(1);
      const refused = await t.http.get('/work/quiet/reject/r').result;
      expect(refused.status).toBe(429);
      t.probe.finish('h');
      const result = await holder.result;
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ key: 'h', agent_id: 'quiet', permit_id_ok: true });
      await waitFor(() => t.status().active === 0, 'the slot to come back');
      expect(t.app.get(admissionControllerClass(variant))).toBe(t.admission);
      expect(t.app.get(Probe)).toBe(t.probe);
    });
  });
});
