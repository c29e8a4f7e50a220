import { EventEmitter2 } from 'eventemitter2';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { AdmissionDecisionEvent } from '../../src/admission/admission.types';
import { isValidId } from '../../src/shared/ids/id-rule';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, admissionSuite, refusal } from '../support/admission-controller-fixture';

/** Values that break each option's rule, with a marker number or string where the value is searchable. */
const INVALID: Record<string, unknown[]> = {
  globalLimit: [0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, '8', null, true, {}, 987654.5],
  defaultAgentLimit: [0, -3, 2.5, NaN, Infinity, 2 ** 53, '64', null, false, [], 987654.5],
  agentLimits: [
    null,
    [],
    new Map([['a', 1]]),
    'a=1',
    5,
    { a: 0 },
    { a: -1 },
    { a: 1.5 },
    { a: '2' },
    { a: null },
    { a: Infinity },
    { '': 1 },
    { 'bad\uD800id': 1 },
    { ['x'.repeat(257)]: 1 },
    Object.create({ inherited: 1 }),
    new (class Limits {})(),
  ],
  overflow: ['Queue', 'REJECT', '', 'wait', null, 0, true],
  maxQueue: [-1, 1.5, NaN, Infinity, 2 ** 53, '10', null, 987654.5],
  defaultQueueTimeoutMs: [-1, 0.5, NaN, -Infinity, 2 ** 53, 'Infinity', 'forever', '100', null, 987654.5],
  drainTimeoutMs: [-1, 600_001, 0.5, NaN, Infinity, 'infinity', '100', null, 987654.5],
};

describe('§2 agent ids', () => {
  it('valid ids are 1..256 UTF-8 bytes of well-formed UTF-16', () => {
    for (const id of ['a', 'x'.repeat(256), 'é'.repeat(128), '😀'.repeat(64), '日本語', ' ', '__proto__']) {
      expect(isValidId(id)).toBe(true);
    }
    for (const id of ['', 'x'.repeat(257), 'é'.repeat(129), '😀'.repeat(64) + 'x', '\uD800', 'a\uDC00b', 'ab\uD83D']) {
      expect(isValidId(id)).toBe(false);
    }
    for (const id of [undefined, null, 1, {}, ['a'], new String('a')]) expect(isValidId(id)).toBe(false);
  });
});

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup, variant } = admissionSuite(variantName);

  /** What building (and starting) a controller on `config` is refused with. */
  const refusedConfig = (config: unknown) => refusal(() => setup(config as AdmissionConfig));

  async function expectInvalidConfig(config: unknown, field: string): Promise<void> {
    const error = await refusedConfig(config);
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error.code).toBe('invalid_admission_control_config');
    expect(error.details?.field).toBe(field);
  }

  describe('§2 Construction', () => {
    describe('defaults', () => {
      it('omitted config, {} and undefined values all give the documented defaults', async () => {
        for (const config of [undefined, {}, Object.fromEntries(Object.keys(INVALID).map((key) => [key, undefined]))]) {
          const fixture = await setup(config as AdmissionConfig);
          const { controller } = fixture;
          const status = controller.status();
          expect(status.global_limit).toBe(1024);
          expect(status.max_queue).toBe(1024);
          expect(status.overflow).toBe('reject');
          await controller.submit('agent');
          expect(controller.status().per_agent.agent.limit).toBe(64);
          await fixture.close();
        }
      });

      it('defaultAgentLimit 64 is enforced per agent and overflow defaults to reject', async () => {
        const { controller } = await setup({});
        for (let i = 0; i < 64; i++) await controller.submit('agent');
        expect((await refusal(() => controller.submit('agent'))).code).toBe('concurrency_limit_reached');
        expect((await controller.submit('other')).status).toBe('granted');
      });

      it('defaultQueueTimeoutMs is 30000', async () => {
        const { controller } = await setup({ globalLimit: 1 }, new ManualClock(5000));
        await controller.submit('a');
        expect(await controller.submit('a', { overflow: 'queue' })).toMatchObject({ status: 'queued', deadline: 35_000 });
      });

      it('drainTimeoutMs is 30000', async () => {
        const { controller, clock, settle } = await setup({});
        await controller.submit('a');
        let outcome: unknown;
        controller.drain().catch((error: AdmissionError) => (outcome = error.code));
        clock.advance(29_999);
        await settle();
        expect(outcome).toBeUndefined();
        clock.advance(1);
        await settle();
        expect(outcome).toBe('drain_timeout');
      });
    });

    describe('validation', () => {
      it.each(Object.keys(INVALID))('every invalid %s names the option and never the value', async (field) => {
        for (const value of INVALID[field]) {
          const error = await refusedConfig({ [field]: value });
          expect(error).toBeInstanceOf(AdmissionError);
          expect(error.code).toBe('invalid_admission_control_config');
          expect(error.details?.field).toBe(field);
          const text = `${error.message} ${JSON.stringify(error.details)}`;
          expect(text).not.toContain('987654');
          expect(text).not.toContain('forever');
          expect(text).not.toContain('wait');
        }
      });

      it('never reports the agent id of an invalid agent limit', async () => {
        const error = await refusedConfig({ agentLimits: { 'secret-agent-name': 0 } });
        expect(error.details?.field).toBe('agentLimits');
        expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain('secret-agent-name');
      });

      it('accepts the boundary values of every option', async () => {
        const valid: AdmissionConfig[] = [
          { globalLimit: 1, defaultAgentLimit: 1, maxQueue: 0, defaultQueueTimeoutMs: 0, drainTimeoutMs: 0 },
          { globalLimit: Number.MAX_SAFE_INTEGER, defaultAgentLimit: Number.MAX_SAFE_INTEGER, maxQueue: Number.MAX_SAFE_INTEGER },
          { defaultQueueTimeoutMs: 'infinity', drainTimeoutMs: 600_000, overflow: 'queue' },
          { defaultQueueTimeoutMs: Infinity, overflow: 'reject', agentLimits: {} },
          { agentLimits: Object.assign(Object.create(null), { a: 1 }) },
          { agentLimits: { ['x'.repeat(256)]: 1, ['é'.repeat(128)]: 2, '😀': 3 } },
        ];
        for (const config of valid) await (await setup(config)).close();
      });

      it('refuses a config that is not a plain object with field "config"', async () => {
        const hostile = new Proxy(
          {},
          {
            getPrototypeOf() {
              throw new Error('trap');
            },
          },
        );
        for (const config of [null, [], 'x', 3, new Map(), new (class Config {})(), Object.create({ globalLimit: 1 }), () => ({}), hostile]) {
          await expectInvalidConfig(config, 'config');
        }
      });

      it('accepts a null-prototype config', async () => {
        const config = Object.assign(Object.create(null), { globalLimit: 3 });
        expect((await setup(config)).controller.status().global_limit).toBe(3);
      });

      it('refuses a throwing getter with a typed error, naming the option', async () => {
        const config = Object.defineProperty({}, 'maxQueue', {
          enumerable: true,
          get() {
            throw new Error('getter secret');
          },
        });
        const error = await refusedConfig(config);
        expect(error.code).toBe('invalid_admission_control_config');
        expect(error.details?.field).toBe('maxQueue');
        expect(error.message).not.toContain('getter secret');
      });

      it('ignores unknown keys', async () => {
        const { controller } = await setup({ globalLimit: 2, agentLimit: 'nonsense', limits: null } as AdmissionConfig);
        expect(controller.status().global_limit).toBe(2);
      });

      it('does not cross-validate: an agent limit may exceed globalLimit', async () => {
        const { controller } = await setup({ globalLimit: 2, agentLimits: { a: 10 } });
        await controller.submit('a');
        expect(controller.status().per_agent.a.limit).toBe(10);
        await controller.submit('a');
        expect((await refusal(() => controller.submit('a'))).details).toEqual({ limit_scope: 'global' });
      });

      it('reports one failing option as {field} and several as sorted {fields}', async () => {
        await expectInvalidConfig({ drainTimeoutMs: -1 }, 'drainTimeoutMs');
        const error = await refusedConfig({ maxQueue: -1, drainTimeoutMs: -1, globalLimit: 0 });
        expect(error.details).toEqual({ fields: ['drainTimeoutMs', 'globalLimit', 'maxQueue'] });
      });

      it('never calls a getter of the configuration', async () => {
        const getter = jest.fn(() => 4);
        const config = Object.defineProperty({}, 'globalLimit', { get: getter, enumerable: true });
        await expectInvalidConfig(config, 'globalLimit');
        expect(getter).not.toHaveBeenCalled();
      });
    });

    describe('agent ids', () => {
      it('__proto__ and constructor are ordinary agent ids with their own limits', async () => {
        const agentLimits = JSON.parse('{"__proto__": 2, "constructor": 1}') as Record<string, number>;
        const { controller } = await setup({ agentLimits });
        await controller.submit('__proto__');
        await controller.submit('__proto__');
        expect((await refusal(() => controller.submit('__proto__'))).details).toEqual({ limit_scope: 'agent' });
        await controller.submit('constructor');
        expect((await refusal(() => controller.submit('constructor'))).details).toEqual({ limit_scope: 'agent' });
        const perAgent = controller.status().per_agent;
        expect(perAgent['__proto__']).toEqual({ active: 2, queued: 0, limit: 2 });
        expect(perAgent['constructor']).toEqual({ active: 1, queued: 0, limit: 1 });
      });

      it('looks limits up as own entries only, never through the prototype', async () => {
        const { controller } = await setup({ defaultAgentLimit: 3 });
        for (const id of ['toString', 'hasOwnProperty', 'constructor', '__proto__', 'valueOf']) {
          await controller.submit(id);
          expect(controller.status().per_agent[id].limit).toBe(3);
        }
      });

      it('an invalid agent id at submit is invalid_admission_options with field agentId', async () => {
        const { controller } = await setup({});
        for (const id of ['', 'x'.repeat(257), 'é'.repeat(129), 'lone\uD800', 42, null, undefined]) {
          const error = await refusal(() => controller.submit(id as string));
          expect(error.code).toBe('invalid_admission_options');
          expect(error.details).toEqual({ field: 'agentId' });
        }
        expect((await controller.submit('x'.repeat(256))).status).toBe('granted');
      });
    });

    describe('collaborators', () => {
      it('uses the injected clock for deadlines and records', async () => {
        const clock = new ManualClock(7_000);
        const { controller } = await setup({ globalLimit: 1, overflow: 'queue' }, clock);
        await controller.submit('a');
        expect(await controller.submit('a', { queueTimeoutMs: 50 })).toMatchObject({ deadline: 7_050 });
        expect(controller.beginDrain().drain_started_at).toBe(clock.wallNow());
      });

      it('an EventEmitter2 fits as the telemetry sink', async () => {
        const emitter = new EventEmitter2();
        const seen: AdmissionDecisionEvent[] = [];
        emitter.on('agent_runtime.admission.decision', (payload: AdmissionDecisionEvent) => seen.push(payload));
        const { controller, settle } = await setup({}, new ManualClock(), emitter);
        await controller.submit('a');
        await settle();
        expect(seen).toEqual([{ wait_ms: 0, active: 1, queued: 0, outcome: 'granted', agent_id: 'a' }]);
      });

      it('works without a telemetry sink and with the system clock', async () => {
        const built = await variant.create({}, {});
        try {
          const permit = await built.controller.acquire('a');
          expect(built.controller.release(permit)).toBe(true);
        } finally {
          await built.close();
        }
      });
    });
  });
});
