import { performance } from 'node:perf_hooks';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import { ADMISSION_VARIANTS, TimerlessClock, admissionSuite, granted, refusal, thrown } from '../support/admission-controller-fixture';

const STATUS_KEYS = ['active', 'available', 'drain_started_at', 'draining', 'global_limit', 'max_queue', 'overflow', 'per_agent', 'queue_length'];

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup, variant } = admissionSuite(variantName);

  describe('§5.7 run', () => {
    it('passes the permit and permit.signal to fn, returns its value and releases afterwards', async () => {
      const { controller, outcomes, settle } = await setup();
      let seen: { permit?: Permit; signal?: AbortSignal; active?: number } = {};
      const value = await controller.run('a', (permit, signal) => {
        seen = { permit, signal, active: controller.status().active };
        return 42;
      });
      expect(value).toBe(42);
      expect(seen.active).toBe(1);
      expect(seen.signal).toBe(seen.permit?.signal);
      expect(seen.signal?.reason).toMatchObject({ details: { outcome: 'released' } });
      expect(controller.status().active).toBe(0);
      await settle();
      expect(outcomes()).toEqual(['granted', 'released']);
    });

    it('holds the permit until an async fn settles', async () => {
      const { controller, settle } = await setup();
      let finish!: (value: string) => void;
      const running = controller.run('a', () => new Promise<string>((resolve) => (finish = resolve)));
      await settle();
      expect(controller.status().active).toBe(1);
      finish('done');
      await expect(running).resolves.toBe('done');
      expect(controller.status().active).toBe(0);
    });

    it('rethrows what fn throws, synchronously or asynchronously, and releases', async () => {
      const { controller, outcomes, settle } = await setup();
      const failure = new Error('tool failed');
      await expect(
        controller.run('a', () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      await expect(controller.run('a', async () => Promise.reject(failure))).rejects.toBe(failure);
      expect(controller.status().active).toBe(0);
      await settle();
      expect(outcomes()).toEqual(['granted', 'released', 'granted', 'released']);
    });

    it('ignores a false from release when fn released its own permit', async () => {
      const { controller, outcomes, settle } = await setup();
      await expect(controller.run('a', (permit) => (controller.release(permit), 'ok'))).resolves.toBe('ok');
      await settle();
      expect(outcomes()).toEqual(['granted', 'released']);
    });

    it('waits in the queue and runs once granted', async () => {
      const { controller, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const fn = jest.fn(() => 'queued work');
      const running = controller.run('a', fn);
      await settle();
      expect(fn).not.toHaveBeenCalled();
      controller.release(first);
      await expect(running).resolves.toBe('queued work');
    });

    it('uses opts.signal as owner when owner is omitted: aborting it stops queued work', async () => {
      const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const caller = new AbortController();
      const fn = jest.fn();
      const running = controller.run('a', fn, { signal: caller.signal });
      const reason = new Error('client left');
      caller.abort(reason);
      await expect(running).rejects.toBe(reason);
      expect(fn).not.toHaveBeenCalled();
      await settle();
      expect(outcomes()).toEqual(['granted', 'queued', 'owner_down']);
    });

    it('uses opts.signal as owner when owner is omitted: aborting it revokes running work at once', async () => {
      const { controller, settle } = await setup();
      const caller = new AbortController();
      let finish!: () => void;
      let permitSignal!: AbortSignal;
      const running = controller.run(
        'a',
        (_, signal) => {
          permitSignal = signal;
          return new Promise<void>((resolve) => (finish = resolve));
        },
        { signal: caller.signal },
      );
      await settle();
      caller.abort();
      expect(permitSignal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome: 'owner_down' } });
      expect(controller.status().active).toBe(0);
      finish();
      await expect(running).resolves.toBeUndefined();
    });

    it('with an explicit owner, aborting opts.signal does not touch running work', async () => {
      const { controller, settle } = await setup();
      const caller = new AbortController();
      const owner = new AbortController();
      let finish!: () => void;
      const running = controller.run('a', () => new Promise<void>((resolve) => (finish = resolve)), { owner: owner.signal, signal: caller.signal });
      await settle();
      caller.abort();
      await settle();
      expect(controller.status().active).toBe(1);
      finish();
      await running;
      expect(controller.status().active).toBe(0);
    });

    it('admission failures reject before fn runs', async () => {
      const { controller } = await setup({ globalLimit: 1 });
      granted(await controller.submit('a'));
      const fn = jest.fn();
      await expect(controller.run('b', fn)).rejects.toMatchObject({ code: 'concurrency_limit_reached' });
      await expect(controller.run('', fn)).rejects.toMatchObject({ code: 'invalid_admission_options' });
      await expect(controller.run('b', 'not a function' as never)).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field: 'fn' } });
      controller.beginDrain();
      await expect(controller.run('b', fn)).rejects.toMatchObject({ code: 'deployment_draining' });
      expect(fn).not.toHaveBeenCalled();
    });
  });

  describe('§5.8 status', () => {
    it('is a frozen record with exactly the documented keys and values', async () => {
      const { controller } = await setup({ globalLimit: 3, maxQueue: 7, overflow: 'queue', agentLimits: { a: 1 } });
      granted(await controller.submit('a'));
      granted(await controller.submit('b'));
      await controller.submit('a');
      const status = controller.status();
      expect(Object.isFrozen(status)).toBe(true);
      expect(Object.keys(status).sort()).toEqual([...STATUS_KEYS, ...variant.extraStatusKeys].sort());
      const core = variant.coreStatus(status);
      expect({ ...core, per_agent: { ...core.per_agent } }).toEqual({
        draining: false,
        drain_started_at: null,
        global_limit: 3,
        max_queue: 7,
        active: 2,
        available: 1,
        queue_length: 1,
        overflow: 'queue',
        per_agent: { a: { active: 1, queued: 1, limit: 1 }, b: { active: 1, queued: 0, limit: 64 } },
      });
    });

    it('per_agent is a frozen null-prototype object listing only agents with work', async () => {
      const { controller, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const permit = granted(await controller.submit('a'));
      const waiting = controller.acquire('b');
      await settle();
      let perAgent = controller.status().per_agent;
      expect(Object.getPrototypeOf(perAgent)).toBeNull();
      expect(Object.isFrozen(perAgent)).toBe(true);
      expect(Object.isFrozen(perAgent.a)).toBe(true);
      expect(Object.keys(perAgent)).toEqual(['a', 'b']);
      controller.release(permit);
      await waiting;
      await settle();
      perAgent = controller.status().per_agent;
      expect(Object.keys(perAgent)).toEqual(['b']);
      expect(perAgent.b).toEqual({ active: 1, queued: 0, limit: 64 });
    });

    it('available never goes below 0 and reflects free global capacity', async () => {
      const { controller } = await setup({ globalLimit: 2 });
      expect(controller.status().available).toBe(2);
      granted(await controller.submit('a'));
      granted(await controller.submit('b'));
      expect(controller.status().available).toBe(0);
    });

    it('is JSON-safe and contains no request refs, permit ids or signals', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      const permit = granted(await controller.submit('__proto__'));
      const queued = await controller.submit('constructor', { owner: new AbortController().signal });
      controller.beginDrain();
      const status = controller.status();
      const json = JSON.stringify(status);
      expect(JSON.parse(json)).toEqual({ ...status, per_agent: { ...status.per_agent } });
      expect(JSON.parse(json).per_agent).toEqual({ ['__proto__']: { active: 1, queued: 0, limit: 64 } });
      for (const secret of ['request-', 'permit-', permit.id, permit.requestRef, queued.requestRef]) expect(json).not.toContain(secret);
      assertPlainData(status);
    });

    it('purges expired requests first', async () => {
      const { controller, clock, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' }, new TimerlessClock());
      granted(await controller.submit('a'));
      await controller.submit('b', { queueTimeoutMs: 5 });
      clock.advance(5);
      const status = controller.status();
      expect(status.queue_length).toBe(0);
      expect(Object.keys(status.per_agent)).toEqual(['a']);
      await settle();
      expect(outcomes()).toEqual(['granted', 'queued', 'expired']);
    });
  });

  describe('§5.9 Drain', () => {
    it('beginDrain is idempotent: drain_started_at is set once, from the wall clock', async () => {
      const { controller, clock } = await setup();
      const first = controller.beginDrain();
      expect(first).toMatchObject({ draining: true, drain_started_at: clock.wallNow() });
      expect(Object.isFrozen(first)).toBe(true);
      const startedAt = clock.wallNow();
      clock.advance(1000);
      expect(controller.beginDrain()).toMatchObject({ draining: true, drain_started_at: startedAt });
      expect(controller.status()).toMatchObject({ draining: true, drain_started_at: startedAt });
    });

    it('fails every queued request, in enqueue order, with deployment_draining', async () => {
      const { controller, clock, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('z'));
      const order: string[] = [];
      const waits = ['b', 'a', 'b', 'c'].map((agent, i) =>
        controller.acquire(agent).catch((error: AdmissionError) => {
          order.push(`${i}:${error.code}`);
        }),
      );
      await settle();
      clock.advance(20);
      events.length = 0;
      const status = controller.beginDrain();
      expect(status).toMatchObject({ queue_length: 0, active: 1 });
      await Promise.all(waits);
      expect(order).toEqual(['0:deployment_draining', '1:deployment_draining', '2:deployment_draining', '3:deployment_draining']);
      await settle();
      expect(events).toEqual(
        ['b', 'a', 'b', 'c'].map((agent_id, i) => ({ wait_ms: 20, active: 1, queued: 3 - i, outcome: 'deployment_draining', agent_id })),
      );
      controller.beginDrain();
      await settle();
      expect(events).toHaveLength(4);
    });

    it('reports a request whose deadline already passed as expired, not draining', async () => {
      const { controller, clock, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' }, new TimerlessClock());
      granted(await controller.submit('a'));
      const late = controller.acquire('a', { queueTimeoutMs: 5 });
      const fine = controller.acquire('a', { queueTimeoutMs: 50 });
      // both are queued before time moves, as synchronous submits leave them
      await settle();
      clock.advance(5);
      controller.beginDrain();
      await expect(late).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      await expect(fine).rejects.toMatchObject({ code: 'deployment_draining' });
      await settle();
      expect(outcomes()).toEqual(['granted', 'queued', 'queued', 'expired', 'deployment_draining']);
    });

    it('active permits keep running and can still be released or cancelled', async () => {
      const { controller, settle } = await setup();
      const kept = granted(await controller.submit('a'));
      const cancelled = granted(await controller.submit('a'));
      controller.beginDrain();
      expect(kept.signal.aborted).toBe(false);
      expect(controller.cancel(cancelled.requestRef)).toBe(true);
      expect(controller.release(kept)).toBe(true);
      await settle();
      expect(controller.status().active).toBe(0);
    });

    it('new submits throw deployment_draining and emit nothing; awaits of drained refs reject with it', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const ref = (await controller.submit('a')).requestRef;
      controller.beginDrain();
      await settle();
      const count = events.length;
      expect((await refusal(() => controller.submit('a'))).code).toBe('deployment_draining');
      await expect(controller.acquire('a')).rejects.toMatchObject({ code: 'deployment_draining' });
      await expect(controller.await(ref)).rejects.toMatchObject({ code: 'deployment_draining' });
      await settle();
      expect(events).toHaveLength(count);
    });

    it('drain resolves at once when nothing is active', async () => {
      const { controller } = await setup();
      const status = await controller.drain();
      expect(status).toMatchObject({ draining: true, active: 0 });
    });

    it('drain resolves with the status at the moment active reaches 0, without polling', async () => {
      const { controller, stateOf, timers } = await setup();
      const permits = [granted(await controller.submit('a')), granted(await controller.submit('b'))];
      const draining = controller.drain(1000);
      expect(timers()).toBe(1);
      controller.release(permits[0]);
      expect(await stateOf(draining)).toBe('pending');
      controller.cancel(permits[1].requestRef);
      const status = await draining;
      expect(status).toMatchObject({ draining: true, active: 0, queue_length: 0 });
      expect(Object.isFrozen(status)).toBe(true);
      expect(timers()).toBe(0);
    });

    it('drain rejects with drain_timeout and details.active, revoking nothing', async () => {
      const { controller, clock, stateOf } = await setup({ drainTimeoutMs: 500 });
      const permits = [granted(await controller.submit('a')), granted(await controller.submit('b'))];
      const draining = controller.drain();
      clock.advance(499);
      expect(await stateOf(draining)).toBe('pending');
      clock.advance(1);
      const error = await draining.catch((e: AdmissionError) => e);
      expect(error).toBeInstanceOf(AdmissionError);
      expect(error).toMatchObject({ code: 'drain_timeout', details: { active: 2 } });
      expect(permits.every((permit) => !permit.signal.aborted)).toBe(true);
      expect(controller.status().active).toBe(2);
      expect(controller.release(permits[0])).toBe(true);
    });

    it('drain(0) with active permits times out on the next timer turn', async () => {
      const { controller, clock } = await setup();
      granted(await controller.submit('a'));
      const draining = controller.drain(0);
      clock.advance(0);
      await expect(draining).rejects.toMatchObject({ code: 'drain_timeout', details: { active: 1 } });
    });

    it('drain rejects invalid_drain_timeout for a timeout outside 0..600000', async () => {
      const { controller } = await setup();
      for (const timeoutMs of [-1, 600_001, 1.5, NaN, Infinity, 'infinity', '100', null]) {
        await expect(controller.drain(timeoutMs as number)).rejects.toMatchObject({ code: 'invalid_drain_timeout' });
      }
      await expect(controller.drain(600_000)).resolves.toMatchObject({ draining: true });
    });
  });

  describe('§5.10 deadlineAfter', () => {
    it('the instance method uses the injected clock', async () => {
      const { controller, clock } = await setup();
      clock.advance(234);
      expect(controller.deadlineAfter(0)).toBe(1234);
      expect(controller.deadlineAfter(766)).toBe(2000);
      expect(controller.deadlineAfter('infinity')).toBe('infinity');
      expect(controller.deadlineAfter(Infinity)).toBe('infinity');
    });

    it('the static method uses performance.now()', () => {
      const before = performance.now();
      const deadline = variant.staticDeadlineAfter(5000) as number;
      expect(deadline).toBeGreaterThanOrEqual(before + 5000);
      expect(deadline).toBeLessThanOrEqual(performance.now() + 5000);
      expect(variant.staticDeadlineAfter('infinity')).toBe('infinity');
      expect(variant.staticDeadlineAfter(Infinity)).toBe('infinity');
    });

    it('refuses anything but a safe integer ≥ 0 or infinity with invalid_admission_options', async () => {
      const { controller } = await setup();
      for (const ms of [-1, 1.5, NaN, -Infinity, 2 ** 53, '100', null, undefined]) {
        for (const call of [() => controller.deadlineAfter(ms as number), () => variant.staticDeadlineAfter(ms as number)]) {
          const error = thrown(call);
          expect(error).toBeInstanceOf(AdmissionError);
          expect(error.code).toBe('invalid_admission_options');
        }
      }
    });

    it('a deadline it builds is accepted by submit', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const deadline = controller.deadlineAfter(250);
      expect(await controller.submit('a', { deadline })).toMatchObject({ status: 'queued', deadline: 1250 });
    });
  });
});

function assertPlainData(value: unknown): void {
  if (value === null || ['number', 'string', 'boolean'].includes(typeof value)) return;
  expect(typeof value).toBe('object');
  expect([Object.prototype, null]).toContain(Object.getPrototypeOf(value));
  for (const key of Reflect.ownKeys(value as object)) {
    expect(typeof key).toBe('string');
    assertPlainData((value as Record<string, unknown>)[key as string]);
  }
}
