import { EventEmitter2 } from 'eventemitter2';
import { AdmissionController } from './admission-controller';
import type { AdmissionConfig } from './admission-config';
import { AdmissionError } from './admission.errors';
import type { AdmissionDecisionEvent } from './admission.types';
import { isValidId } from '../shared/id-rule';
import { ManualClock } from '../testing/manual-clock';
import { thrown } from './testing/controller-fixture';

const construct = (config: unknown) => () => new AdmissionController(config as AdmissionConfig, { clock: new ManualClock() });

function expectInvalidConfig(config: unknown, field: string): void {
  const error = thrown(construct(config));
  expect(error).toBeInstanceOf(AdmissionError);
  expect(error.code).toBe('invalid_admission_control_config');
  expect(error.details?.field).toBe(field);
}

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

describe('§2 Construction', () => {
  describe('defaults', () => {
    it('omitted config, {} and undefined values all give the documented defaults', () => {
      for (const config of [undefined, {}, Object.fromEntries(Object.keys(INVALID).map((key) => [key, undefined]))]) {
        const clock = new ManualClock();
        const controller = new AdmissionController(config as AdmissionConfig, { clock });
        const status = controller.status();
        expect(status.global_limit).toBe(1024);
        expect(status.max_queue).toBe(1024);
        expect(status.overflow).toBe('reject');
        controller.submit('agent');
        expect(controller.status().per_agent.agent.limit).toBe(64);
      }
    });

    it('defaultAgentLimit 64 is enforced per agent and overflow defaults to reject', () => {
      const controller = new AdmissionController({}, { clock: new ManualClock() });
      for (let i = 0; i < 64; i++) controller.submit('agent');
      expect(thrown(() => controller.submit('agent')).code).toBe('concurrency_limit_reached');
      expect(controller.submit('other').status).toBe('granted');
    });

    it('defaultQueueTimeoutMs is 30000', () => {
      const clock = new ManualClock(5000);
      const controller = new AdmissionController({ globalLimit: 1 }, { clock });
      controller.submit('a');
      expect(controller.submit('a', { overflow: 'queue' })).toMatchObject({ status: 'queued', deadline: 35_000 });
    });

    it('drainTimeoutMs is 30000', async () => {
      const clock = new ManualClock();
      const controller = new AdmissionController({}, { clock });
      controller.submit('a');
      let outcome: unknown;
      controller.drain().catch((error: AdmissionError) => (outcome = error.code));
      clock.advance(29_999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(outcome).toBeUndefined();
      clock.advance(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(outcome).toBe('drain_timeout');
    });
  });

  describe('validation', () => {
    it.each(Object.keys(INVALID))('every invalid %s names the option and never the value', (field) => {
      for (const value of INVALID[field]) {
        const error = thrown(construct({ [field]: value }));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('invalid_admission_control_config');
        expect(error.details?.field).toBe(field);
        const text = `${error.message} ${JSON.stringify(error.details)}`;
        expect(text).not.toContain('987654');
        expect(text).not.toContain('forever');
        expect(text).not.toContain('wait');
      }
    });

    it('never reports the agent id of an invalid agent limit', () => {
      const error = thrown(construct({ agentLimits: { 'secret-agent-name': 0 } }));
      expect(error.details?.field).toBe('agentLimits');
      expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain('secret-agent-name');
    });

    it('accepts the boundary values of every option', () => {
      const valid: AdmissionConfig[] = [
        { globalLimit: 1, defaultAgentLimit: 1, maxQueue: 0, defaultQueueTimeoutMs: 0, drainTimeoutMs: 0 },
        { globalLimit: Number.MAX_SAFE_INTEGER, defaultAgentLimit: Number.MAX_SAFE_INTEGER, maxQueue: Number.MAX_SAFE_INTEGER },
        { defaultQueueTimeoutMs: 'infinity', drainTimeoutMs: 600_000, overflow: 'queue' },
        { defaultQueueTimeoutMs: Infinity, overflow: 'reject', agentLimits: {} },
        { agentLimits: Object.assign(Object.create(null), { a: 1 }) },
        { agentLimits: { ['x'.repeat(256)]: 1, ['é'.repeat(128)]: 2, '😀': 3 } },
      ];
      for (const config of valid) expect(construct(config)).not.toThrow();
    });

    it('refuses a config that is not a plain object with field "config"', () => {
      const hostile = new Proxy(
        {},
        {
          getPrototypeOf() {
            throw new Error('trap');
          },
        },
      );
      for (const config of [null, [], 'x', 3, new Map(), new (class Config {})(), Object.create({ globalLimit: 1 }), () => ({}), hostile]) {
        expectInvalidConfig(config, 'config');
      }
    });

    it('accepts a null-prototype config', () => {
      const config = Object.assign(Object.create(null), { globalLimit: 3 });
      expect(new AdmissionController(config, { clock: new ManualClock() }).status().global_limit).toBe(3);
    });

    it('refuses a throwing getter with a typed error, naming the option', () => {
      const config = Object.defineProperty({}, 'maxQueue', {
        enumerable: true,
        get() {
          throw new Error('getter secret');
        },
      });
      const error = thrown(construct(config));
      expect(error.code).toBe('invalid_admission_control_config');
      expect(error.details?.field).toBe('maxQueue');
      expect(error.message).not.toContain('getter secret');
    });

    it('ignores unknown keys', () => {
      const controller = new AdmissionController({ globalLimit: 2, agentLimit: 'nonsense', limits: null } as AdmissionConfig, {
        clock: new ManualClock(),
      });
      expect(controller.status().global_limit).toBe(2);
    });

    it('does not cross-validate: an agent limit may exceed globalLimit', () => {
      const controller = new AdmissionController({ globalLimit: 2, agentLimits: { a: 10 } }, { clock: new ManualClock() });
      controller.submit('a');
      expect(controller.status().per_agent.a.limit).toBe(10);
      controller.submit('a');
      expect(thrown(() => controller.submit('a')).details).toEqual({ limit_scope: 'global' });
    });

    it('reports one failing option as {field} and several as sorted {fields}', () => {
      expectInvalidConfig({ drainTimeoutMs: -1 }, 'drainTimeoutMs');
      const error = thrown(construct({ maxQueue: -1, drainTimeoutMs: -1, globalLimit: 0 }));
      expect(error.details).toEqual({ fields: ['drainTimeoutMs', 'globalLimit', 'maxQueue'] });
    });

    it('never calls a getter of the configuration', () => {
      const getter = jest.fn(() => 4);
      const config = Object.defineProperty({}, 'globalLimit', { get: getter, enumerable: true });
      expectInvalidConfig(config, 'globalLimit');
      expect(getter).not.toHaveBeenCalled();
    });
  });

  describe('agent ids', () => {
    it('__proto__ and constructor are ordinary agent ids with their own limits', () => {
      const agentLimits = JSON.parse('{"__proto__": 2, "constructor": 1}') as Record<string, number>;
      const controller = new AdmissionController({ agentLimits }, { clock: new ManualClock() });
      controller.submit('__proto__');
      controller.submit('__proto__');
      expect(thrown(() => controller.submit('__proto__')).details).toEqual({ limit_scope: 'agent' });
      controller.submit('constructor');
      expect(thrown(() => controller.submit('constructor')).details).toEqual({ limit_scope: 'agent' });
      const perAgent = controller.status().per_agent;
      expect(perAgent['__proto__']).toEqual({ active: 2, queued: 0, limit: 2 });
      expect(perAgent['constructor']).toEqual({ active: 1, queued: 0, limit: 1 });
    });

    it('looks limits up as own entries only, never through the prototype', () => {
      const controller = new AdmissionController({ defaultAgentLimit: 3 }, { clock: new ManualClock() });
      for (const id of ['toString', 'hasOwnProperty', 'constructor', '__proto__', 'valueOf']) {
        controller.submit(id);
        expect(controller.status().per_agent[id].limit).toBe(3);
      }
    });

    it('valid ids are 1..256 UTF-8 bytes of well-formed UTF-16', () => {
      for (const id of ['a', 'x'.repeat(256), 'é'.repeat(128), '😀'.repeat(64), '日本語', ' ', '__proto__']) {
        expect(isValidId(id)).toBe(true);
      }
      for (const id of ['', 'x'.repeat(257), 'é'.repeat(129), '😀'.repeat(64) + 'x', '\uD800', 'a\uDC00b', 'ab\uD83D']) {
        expect(isValidId(id)).toBe(false);
      }
      for (const id of [undefined, null, 1, {}, ['a'], new String('a')]) expect(isValidId(id)).toBe(false);
    });

    it('an invalid agent id at submit is invalid_admission_options with field agentId', () => {
      const controller = new AdmissionController({}, { clock: new ManualClock() });
      for (const id of ['', 'x'.repeat(257), 'é'.repeat(129), 'lone\uD800', 42, null, undefined]) {
        const error = thrown(() => controller.submit(id as string));
        expect(error.code).toBe('invalid_admission_options');
        expect(error.details).toEqual({ field: 'agentId' });
      }
      expect(controller.submit('x'.repeat(256)).status).toBe('granted');
    });
  });

  describe('collaborators', () => {
    it('uses the injected clock for deadlines and records', () => {
      const clock = new ManualClock(7_000);
      const controller = new AdmissionController({ globalLimit: 1, overflow: 'queue' }, { clock });
      controller.submit('a');
      expect(controller.submit('a', { queueTimeoutMs: 50 })).toMatchObject({ deadline: 7_050 });
      expect(controller.beginDrain().drain_started_at).toBe(clock.wallNow());
    });

    it('an EventEmitter2 fits as the telemetry sink', () => {
      const emitter = new EventEmitter2();
      const seen: AdmissionDecisionEvent[] = [];
      emitter.on('agent_runtime.admission.decision', (payload: AdmissionDecisionEvent) => seen.push(payload));
      const controller = new AdmissionController({}, { clock: new ManualClock(), events: emitter });
      controller.submit('a');
      expect(seen).toEqual([{ wait_ms: 0, active: 1, queued: 0, outcome: 'granted', agent_id: 'a' }]);
    });

    it('works without a telemetry sink and with the system clock', async () => {
      const controller = new AdmissionController();
      const permit = await controller.acquire('a');
      expect(controller.release(permit)).toBe(true);
    });
  });
});
