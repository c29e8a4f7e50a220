import { getEventListeners } from 'node:events';
import { MAX_TIMER_DELAY_MS } from '../../src/shared/time/clock';
import type { AdmissionService } from '../../src/admission/admission-service';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, EarlyClock, TimerlessClock, admissionSuite, granted, refusal, thrown } from '../support/admission-controller-fixture';

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup, variant } = admissionSuite(variantName);

  describe('§5.1 submit', () => {
    it('a granted result is frozen {requestRef, status, permit}', async () => {
      const { controller } = await setup();
      const result = await controller.submit('a');
      expect(Object.isFrozen(result)).toBe(true);
      expect(Object.keys(result).sort()).toEqual(['permit', 'requestRef', 'status']);
      expect(result.status).toBe('granted');
      expect(granted(result).requestRef).toBe(result.requestRef);
    });

    it('a queued result is frozen {requestRef, status, deadline} with the absolute deadline in effect', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 400 });
      await controller.submit('a');
      const result = await controller.submit('a');
      expect(Object.isFrozen(result)).toBe(true);
      expect(Object.keys(result).sort()).toEqual(['deadline', 'requestRef', 'status']);
      expect(result).toEqual({ requestRef: result.requestRef, status: 'queued', deadline: 1400 });
      expect(await controller.submit('a', { deadline: 1234.5 })).toMatchObject({ deadline: 1234.5 });
      expect(await controller.submit('a', { queueTimeoutMs: 'infinity' })).toMatchObject({ deadline: 'infinity' });
    });

    it('draining is reported before any validation and emits nothing', async () => {
      const { controller, events, settle } = await setup();
      controller.beginDrain();
      for (const [agentId, opts] of [['a', undefined], ['', undefined], [42, 'not options'], ['a', { overflow: 'bogus' }]] as const) {
        const error = await refusal(() => controller.submit(agentId as string, opts as never));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('deployment_draining');
      }
      await settle();
      expect(events).toEqual([]);
    });

    it('invalid input emits nothing and leaves the controller serving', async () => {
      const { controller, events, settle } = await setup();
      await refusal(() => controller.submit('', {}));
      await refusal(() => controller.submit('a', { deadline: NaN }));
      await settle();
      expect(events).toEqual([]);
      expect((await controller.submit('a')).status).toBe('granted');
    });

    it('validation comes before an already-aborted signal or owner', async () => {
      const { controller, events, settle } = await setup();
      const error = await refusal(() => controller.submit('', { signal: AbortSignal.abort(new Error('r')), owner: AbortSignal.abort() }));
      expect(error).toMatchObject({ code: 'invalid_admission_options', details: { field: 'agentId' } });
      expect(await refusal(() => controller.submit('a', { owner: AbortSignal.abort(), deadline: NaN }))).toMatchObject({ details: { field: 'deadline' } });
      await settle();
      expect(events).toEqual([]);
    });

    describe('already aborted at submit (step 3)', () => {
      it('an aborted signal throws signal.reason with telemetry requester_down, even with capacity', async () => {
        const { controller, events, settle } = await setup();
        const reason = new Error('caller gone');
        const error = await refusal(() => controller.submit('a', { signal: AbortSignal.abort(reason) }));
        expect(error).toBe(reason);
        await settle();
        expect(events).toEqual([{ wait_ms: 0, active: 0, queued: 0, outcome: 'requester_down', agent_id: 'a' }]);
        expect(controller.status().active).toBe(0);
      });

      it('an aborted owner throws owner_down with telemetry owner_down', async () => {
        const { controller, events, settle } = await setup();
        const error = await refusal(() => controller.submit('a', { owner: AbortSignal.abort(new Error('not shown')) }));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('owner_down');
        await settle();
        expect(events).toEqual([{ wait_ms: 0, active: 0, queued: 0, outcome: 'owner_down', agent_id: 'a' }]);
      });

      it('both aborted throws signal.reason with telemetry owner_down; so does one object as both', async () => {
        const { controller, outcomes, settle } = await setup();
        const reason = new Error('r');
        expect(await refusal(() => controller.submit('a', { owner: AbortSignal.abort(), signal: AbortSignal.abort(reason) }))).toBe(reason);
        const same = AbortSignal.abort(reason);
        expect(await refusal(() => controller.submit('a', { owner: same, signal: same }))).toBe(reason);
        await settle();
        expect(outcomes()).toEqual(['owner_down', 'owner_down']);
      });

      it('acquire rejects instead of throwing', async () => {
        const { controller } = await setup();
        const reason = new Error('r');
        await expect(controller.acquire('a', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
        await expect(controller.acquire('a', { owner: AbortSignal.abort() })).rejects.toMatchObject({ code: 'owner_down' });
      });
    });

    it('grants immediately with a past deadline when there is capacity', async () => {
      const { controller, events, settle } = await setup({ overflow: 'queue' });
      expect((await controller.submit('a', { deadline: 0 })).status).toBe('granted');
      expect((await controller.submit('a', { deadline: -1e9, overflow: 'reject' })).status).toBe('granted');
      expect((await controller.submit('a', { queueTimeoutMs: 0 })).status).toBe('granted');
      await settle();
      expect(events.map((event) => [event.outcome, event.wait_ms])).toEqual([
        ['granted', 0],
        ['granted', 0],
        ['granted', 0],
      ]);
    });

    it('rejects at the agent limit with limit_scope agent', async () => {
      const { controller, events, settle } = await setup({ agentLimits: { a: 1 } });
      await controller.submit('a');
      const error = await refusal(() => controller.submit('a'));
      expect(error.code).toBe('concurrency_limit_reached');
      expect(error.details).toEqual({ limit_scope: 'agent' });
      await settle();
      expect(events[1]).toEqual({ wait_ms: 0, active: 1, queued: 0, outcome: 'rejected', agent_id: 'a' });
      expect((await controller.submit('b')).status).toBe('granted');
    });

    it('rejects at the global limit with limit_scope global', async () => {
      const { controller, outcomes, settle } = await setup({ globalLimit: 2 });
      await controller.submit('a');
      await controller.submit('b');
      const error = await refusal(() => controller.submit('c'));
      expect(error.details).toEqual({ limit_scope: 'global' });
      await settle();
      expect(outcomes()).toEqual(['granted', 'granted', 'rejected']);
    });

    it('an agent at its own limit is reported as agent even when the global limit is also reached', async () => {
      const { controller } = await setup({ globalLimit: 1, defaultAgentLimit: 1 });
      await controller.submit('a');
      expect((await refusal(() => controller.submit('a'))).details).toEqual({ limit_scope: 'agent' });
      expect((await refusal(() => controller.submit('b'))).details).toEqual({ limit_scope: 'global' });
    });

    it('queue full is reported before an expired deadline', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue', maxQueue: 1 });
      await controller.submit('a');
      await controller.submit('a');
      const error = await refusal(() => controller.submit('a', { deadline: 0 }));
      expect(error.code).toBe('admission_queue_full');
      expect(error.details).toEqual({ max_queue: 1 });
      await settle();
      expect(events[2]).toEqual({ wait_ms: 0, active: 1, queued: 1, outcome: 'queue_full', agent_id: 'a' });
    });

    it('maxQueue 0 makes every queue attempt admission_queue_full', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue', maxQueue: 0 });
      await controller.submit('a');
      expect((await refusal(() => controller.submit('b'))).code).toBe('admission_queue_full');
      expect((await refusal(() => controller.submit('b', { deadline: 'infinity' }))).code).toBe('admission_queue_full');
    });

    it('a deadline at or before now is queue_deadline_exceeded with telemetry expired', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      for (const opts of [{ deadline: 1000 }, { deadline: 999.5 }, { queueTimeoutMs: 0 }]) {
        const error = await refusal(() => controller.submit('a', opts));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('queue_deadline_exceeded');
      }
      await settle();
      expect(events.slice(1)).toEqual(Array(3).fill({ wait_ms: 0, active: 1, queued: 0, outcome: 'expired', agent_id: 'a' }));
      expect((await controller.submit('a', { deadline: 1000.001 })).status).toBe('queued');
    });

    it('an accepted request is queued with telemetry queued and wait_ms 0', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      await controller.submit('b');
      await settle();
      expect(events[1]).toEqual({ wait_ms: 0, active: 1, queued: 1, outcome: 'queued', agent_id: 'b' });
      expect(controller.status().per_agent.b).toEqual({ active: 0, queued: 1, limit: 64 });
    });

    it('purges expired requests before deciding, so an expired request frees its queue place', async () => {
      const { controller, clock, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue', maxQueue: 1 }, new TimerlessClock());
      await controller.submit('a');
      await controller.submit('a', { queueTimeoutMs: 10 });
      clock.advance(10);
      expect((await controller.submit('a')).status).toBe('queued');
      await settle();
      expect(outcomes()).toEqual(['granted', 'queued', 'expired', 'queued']);
    });
  });

  describe('§5.2 Dispatch', () => {
    it('within one agent grants follow enqueue order', async () => {
      const { controller, settle } = await setup({ defaultAgentLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const order: number[] = [];
      const permits: Permit[] = [];
      [0, 1, 2].forEach((i) => controller.acquire('a').then((permit) => (order.push(i), permits.push(permit))));
      let permit = first;
      for (let i = 0; i < 3; i++) {
        controller.release(permit);
        await settle();
        // whichever request the release granted: the order check below says whether it was the right one
        permit = permits[i];
        expect(permit).toBeDefined();
      }
      expect(order).toEqual([0, 1, 2]);
    });

    it('an agent at its own limit never blocks other agents (no head-of-line blocking)', async () => {
      const { controller, stateOf } = await setup({ globalLimit: 2, agentLimits: { a: 1 }, overflow: 'queue' });
      const a1 = granted(await controller.submit('a'));
      const b1 = granted(await controller.submit('b'));
      const a2 = controller.acquire('a');
      const b2 = controller.acquire('b');
      controller.release(b1);
      expect(await stateOf(b2)).toBe('fulfilled');
      expect(await stateOf(a2)).toBe('pending');
      expect(controller.status().per_agent.a).toEqual({ active: 1, queued: 1, limit: 1 });
      controller.release(a1);
      expect((await a2).agentId).toBe('a');
    });

    it('grants the oldest eligible request across agents', async () => {
      const { controller, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      let held = granted(await controller.submit('z'));
      const order: string[] = [];
      const permits: Permit[] = [];
      ['b', 'a', 'c', 'a'].forEach((agent) => controller.acquire(agent).then((permit) => (order.push(agent), permits.push(permit))));
      for (let i = 0; i < 4; i++) {
        controller.release(held);
        await settle();
        held = permits[i];
        expect(held).toBeDefined();
      }
      expect(order).toEqual(['b', 'a', 'c', 'a']);
    });

    it('skipped requests keep their places when their agent regains capacity', async () => {
      const { controller, stateOf } = await setup({ globalLimit: 3, agentLimits: { a: 1 }, overflow: 'queue' });
      const a1 = granted(await controller.submit('a'));
      const b1 = granted(await controller.submit('b'));
      granted(await controller.submit('c'));
      const a2 = controller.acquire('a');
      const b2 = controller.acquire('b');
      const b3 = controller.acquire('b');
      controller.release(b1);
      expect(await stateOf(b2)).toBe('fulfilled');
      controller.release(a1);
      expect(await stateOf(a2)).toBe('fulfilled');
      expect(await stateOf(b3)).toBe('pending');
    });

    it('re-admits an agent below its limit after a revoke even when it was skipped', async () => {
      const { controller, stateOf } = await setup({ globalLimit: 10, defaultAgentLimit: 2, overflow: 'queue' });
      const [p1] = [granted(await controller.submit('a')), granted(await controller.submit('a'))];
      const waits = [controller.acquire('a'), controller.acquire('a')];
      controller.release(p1);
      expect(await stateOf(waits[0])).toBe('fulfilled');
      expect(await stateOf(waits[1])).toBe('pending');
      controller.cancel((await waits[0]).requestRef);
      expect(await stateOf(waits[1])).toBe('fulfilled');
    });

    it('granting settles every waiter with one permit, stops watching signal and keeps watching owner', async () => {
      const { controller, clock, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const owner = new AbortController();
      const caller = new AbortController();
      const queued = await controller.submit('a', { owner: owner.signal, signal: caller.signal });
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
      const waiters = [controller.await(queued.requestRef), controller.await(queued.requestRef), controller.await(queued.requestRef, 10_000)];
      clock.advance(1234.7);
      controller.release(first);
      const permits = await Promise.all(waiters);
      expect(new Set(permits).size).toBe(1);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(getEventListeners(owner.signal, 'abort')).toHaveLength(1);
      await settle();
      expect(events.at(-1)).toEqual({ wait_ms: 1234, active: 1, queued: 0, outcome: 'granted', agent_id: 'a' });
      owner.abort();
      expect(permits[0].signal.reason).toMatchObject({ details: { outcome: 'owner_down' } });
    });

    it('grants as many requests as a revoke frees capacity for and stops when none is eligible', async () => {
      const { controller, stateOf } = await setup({ globalLimit: 3, agentLimits: { a: 1 }, overflow: 'queue' });
      const p = [granted(await controller.submit('x')), granted(await controller.submit('a')), granted(await controller.submit('y'))];
      const waits = [controller.acquire('a'), controller.acquire('a'), controller.acquire('b')];
      controller.release(p[0]);
      expect(await Promise.all(waits.map(stateOf))).toEqual(['pending', 'pending', 'fulfilled']);
      expect(controller.status()).toMatchObject({ active: 3, queue_length: 2 });
    });
  });

  describe('§5.3 Deadlines and expiry', () => {
    it('a queued acquire is rejected by the timer at its deadline without any further call', async () => {
      const { controller, clock, events, stateOf, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const waiting = controller.acquire('a', { queueTimeoutMs: 500 });
      await settle();
      clock.advance(499);
      expect(await stateOf(waiting)).toBe('pending');
      clock.advance(1);
      await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      await settle();
      expect(events.at(-1)).toEqual({ wait_ms: 500, active: 1, queued: 0, outcome: 'expired', agent_id: 'a' });
    });

    it('one controller timer serves every deadline, and it is disarmed when nothing finite is queued', async () => {
      const { controller, timers, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      expect(timers()).toBe(0);
      await controller.submit('a', { queueTimeoutMs: 'infinity' });
      expect(timers()).toBe(0);
      const refs: string[] = [];
      for (const ms of [300, 100, 200, 100]) refs.push((await controller.submit('b', { queueTimeoutMs: ms })).requestRef);
      expect(timers()).toBe(1);
      refs.forEach((ref) => controller.cancel(ref));
      expect(timers()).toBe(0);
      controller.release(first);
      await settle();
      expect(controller.status().queue_length).toBe(0);
    });

    it('the timer re-arms when the earliest deadline changes', async () => {
      const { controller, clock, outcomes, stateOf, timers, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const late = controller.acquire('a', { queueTimeoutMs: 300 });
      await settle();
      const early = await controller.submit('a', { queueTimeoutMs: 100 });
      controller.cancel(early.requestRef);
      clock.advance(299);
      expect(await stateOf(late)).toBe('pending');
      const earlier = controller.acquire('b', { queueTimeoutMs: 50 });
      await settle();
      clock.advance(50);
      expect(await stateOf(earlier)).toBe('rejected');
      expect(await stateOf(late)).toBe('rejected');
      expect(outcomes().filter((outcome) => outcome === 'expired')).toHaveLength(2);
      expect(timers()).toBe(0);
    });

    it('a timer that fires early re-arms for the remainder', async () => {
      const { controller, clock, stateOf, timers, settle } = await setup({ globalLimit: 1, overflow: 'queue' }, new EarlyClock());
      await controller.submit('a');
      const waiting = controller.acquire('a', { queueTimeoutMs: 400 });
      await settle();
      clock.advance(200);
      expect(await stateOf(waiting)).toBe('pending');
      expect(timers()).toBe(1);
      clock.advance(199);
      expect(await stateOf(waiting)).toBe('pending');
      clock.advance(1);
      await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
    });

    it('every timer delay is clamped to 2^31 − 1 ms', async () => {
      const clock = new ManualClock();
      const delays: number[] = [];
      const setTimer = clock.setTimer.bind(clock);
      jest.spyOn(clock, 'setTimer').mockImplementation((fn, ms) => (delays.push(ms), setTimer(fn, ms)));
      const { controller, stateOf, settle } = await setup({ globalLimit: 1, overflow: 'queue' }, clock);
      await controller.submit('a');
      const waiting = controller.acquire('a', { queueTimeoutMs: 2 * MAX_TIMER_DELAY_MS + 10 });
      await settle();
      clock.advance(MAX_TIMER_DELAY_MS);
      clock.advance(MAX_TIMER_DELAY_MS);
      expect(await stateOf(waiting)).toBe('pending');
      clock.advance(10);
      await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      // the deadline timer's delays: the timers a started controller keeps for itself are not asked about
      expect(delays.filter((ms) => !variant.backgroundDelays.includes(ms))).toEqual([MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, 10]);
    });

    it("'infinity' never expires", async () => {
      const { controller, clock, stateOf, settle } = await setup({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 'infinity' });
      await controller.submit('a');
      const waiting = controller.acquire('a');
      await settle();
      clock.advance(2 ** 45);
      expect(await stateOf(waiting)).toBe('pending');
      expect(controller.status().queue_length).toBe(1);
    });

    it.each([
      ['status', (controller: AdmissionService) => controller.status()],
      ['submit', (controller: AdmissionService) => refusal(() => controller.submit('other', { overflow: 'reject' }))],
      ['await', (controller: AdmissionService) => controller.await('request-unknown').catch(() => undefined)],
      ['cancel', (controller: AdmissionService) => controller.cancel('request-unknown')],
    ] as const)('%s purges expired requests even when no timer fired', async (_, call) => {
      const { controller, clock, outcomes, stateOf, settle } = await setup({ globalLimit: 1, overflow: 'queue' }, new TimerlessClock());
      await controller.submit('a');
      const waiting = controller.acquire('a', { queueTimeoutMs: 100 });
      await settle();
      clock.advance(100);
      expect(await stateOf(waiting)).toBe('pending');
      await call(controller);
      await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      await settle();
      expect(outcomes()).toContain('expired');
      expect(controller.status().queue_length).toBe(0);
    });

    it('a later cancel of an expired request returns false', async () => {
      const { controller, clock, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const ref = (await controller.submit('a', { queueTimeoutMs: 5 })).requestRef;
      clock.advance(5);
      expect(controller.cancel(ref)).toBe(false);
      await settle();
      expect(outcomes()).toEqual(['granted', 'queued', 'expired']);
    });
  });

  describe('§5.4 acquire', () => {
    it('never throws synchronously: every submit error becomes a rejection', async () => {
      const { controller } = await setup({ globalLimit: 1, maxQueue: 0 });
      await controller.submit('a');
      const calls: Array<[() => Promise<Permit>, string]> = [
        [() => controller.acquire(''), 'invalid_admission_options'],
        [() => controller.acquire('a', 'bad' as never), 'invalid_admission_options'],
        [() => controller.acquire('a'), 'concurrency_limit_reached'],
        [() => controller.acquire('a', { overflow: 'queue' }), 'admission_queue_full'],
      ];
      for (const [call, code] of calls) {
        let promise: Promise<Permit> | undefined;
        expect(() => (promise = call())).not.toThrow();
        await expect(promise).rejects.toMatchObject({ code });
      }
      controller.beginDrain();
      await expect(controller.acquire('a')).rejects.toMatchObject({ code: 'deployment_draining' });
    });

    it('resolves with the permit at once when there is capacity', async () => {
      const { controller } = await setup();
      const permit = await controller.acquire('a');
      expect(permit.agentId).toBe('a');
      expect(controller.status().active).toBe(1);
    });

    it('has no timer of its own, so a rejection leaves no stray permit or queue entry', async () => {
      const { controller, clock, timers, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const waiting = controller.acquire('b', { queueTimeoutMs: 100 });
      await settle();
      expect(timers()).toBe(1);
      clock.advance(100);
      await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      controller.release(first);
      await settle();
      expect(controller.status()).toMatchObject({ active: 0, queue_length: 0, per_agent: {} });
      expect(timers()).toBe(0);
    });
  });

  describe('§5.5 await', () => {
    it('rejects invalid_await for a non-string ref or a bad timeoutMs', async () => {
      const { controller } = await setup();
      const ref = (await controller.submit('a')).requestRef;
      for (const [requestRef, timeoutMs] of [
        [42, undefined],
        [undefined, undefined],
        [{ ref }, undefined],
        [ref, -1],
        [ref, 1.5],
        [ref, NaN],
        [ref, -Infinity],
        [ref, '100'],
        [ref, null],
        [ref, 2 ** 53],
      ]) {
        await expect(controller.await(requestRef as string, timeoutMs as number)).rejects.toMatchObject({ code: 'invalid_await' });
      }
      await expect(controller.await(ref, Infinity)).resolves.toMatchObject({ requestRef: ref });
    });

    it('is non-consuming: many awaits see the same permit and awaiting changes nothing', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const ref = (await controller.submit('a')).requestRef;
      const before = controller.status();
      const waits = [controller.await(ref), controller.await(ref, 'infinity'), controller.await(ref, 60_000)];
      await settle();
      expect(controller.status()).toEqual(before);
      expect(events).toHaveLength(2);
      controller.release(first);
      const permits = await Promise.all(waits);
      expect(permits.every((permit) => permit === permits[0])).toBe(true);
      await expect(controller.await(ref)).resolves.toBe(permits[0]);
      await expect(controller.await(ref, 0)).resolves.toBe(permits[0]);
    });

    it.each([
      ['queue_deadline_exceeded', (c: AdmissionService, ref: string, clock: ManualClock) => clock.advance(1000)],
      ['cancelled', (c: AdmissionService, ref: string) => c.cancel(ref)],
      ['deployment_draining', (c: AdmissionService) => c.beginDrain()],
    ] as const)('a queued request rejects its awaits with %s', async (code, end) => {
      const { controller, clock } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const ref = (await controller.submit('a', { queueTimeoutMs: 1000 })).requestRef;
      const waiting = controller.await(ref);
      end(controller, ref, clock);
      await expect(waiting).rejects.toMatchObject({ code });
    });

    it('a queued request rejects its awaits with owner_down or signal.reason when aborted', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const owner = new AbortController();
      const caller = new AbortController();
      const byOwner = (await controller.submit('a', { owner: owner.signal })).requestRef;
      const byCaller = (await controller.submit('a', { signal: caller.signal })).requestRef;
      const waits = [controller.await(byOwner), controller.await(byCaller)];
      owner.abort();
      const reason = new Error('caller');
      caller.abort(reason);
      await expect(waits[0]).rejects.toMatchObject({ code: 'owner_down' });
      await expect(waits[1]).rejects.toBe(reason);
    });

    it('await_timeout leaves the request queued, and it can still be granted', async () => {
      const { controller, clock, stateOf, timers } = await setup({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 'infinity' });
      const first = granted(await controller.submit('a'));
      const ref = (await controller.submit('a')).requestRef;
      const acquired = controller.await(ref);
      const timed = controller.await(ref, 100);
      clock.advance(99);
      expect(await stateOf(timed)).toBe('pending');
      clock.advance(1);
      await expect(timed).rejects.toMatchObject({ code: 'await_timeout' });
      expect(controller.status().queue_length).toBe(1);
      expect(await stateOf(acquired)).toBe('pending');
      controller.release(first);
      expect((await acquired).requestRef).toBe(ref);
      expect(timers()).toBe(0);
    });

    it('a timed await that settles first clears its timer', async () => {
      const { controller, timers } = await setup({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 'infinity' });
      const first = granted(await controller.submit('a'));
      const ref = (await controller.submit('a')).requestRef;
      const timed = controller.await(ref, 10_000);
      expect(timers()).toBe(1);
      controller.release(first);
      await timed;
      expect(timers()).toBe(0);
    });

    it('timeoutMs 0 answers from the state at the call', async () => {
      const { controller, clock } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const queued = (await controller.submit('a', { queueTimeoutMs: 10 })).requestRef;
      await expect(controller.await(queued, 0)).rejects.toMatchObject({ code: 'await_timeout' });
      await expect(controller.await(first.requestRef, 0)).resolves.toBe(first);
      expect(controller.status().queue_length).toBe(1);
      clock.advance(10);
      await expect(controller.await(queued, 0)).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
      await expect(controller.await('request-unknown', 0)).rejects.toMatchObject({ code: 'not_found' });
    });

    it('an active request resolves with its permit, whether granted on submit or from the queue', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      await expect(controller.await(first.requestRef)).resolves.toBe(first);
      const ref = (await controller.submit('a')).requestRef;
      controller.release(first);
      const second = await controller.await(ref);
      expect(second.requestRef).toBe(ref);
      await expect(controller.await(ref)).resolves.toBe(second);
    });

    it('a recently failed request rejects with the same reason', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const caller = new AbortController();
      const ref = (await controller.submit('a', { signal: caller.signal })).requestRef;
      const reason = new Error('caller reason');
      caller.abort(reason);
      await expect(controller.await(ref)).rejects.toBe(reason);
      const cancelled = (await controller.submit('a')).requestRef;
      const first = controller.await(cancelled).catch((error) => error);
      controller.cancel(cancelled);
      const again = await controller.await(cancelled).catch((error) => error);
      expect(again).toBe(await first);
      expect(again).toMatchObject({ code: 'cancelled' });
    });

    it('remembers the 1024 most recent failures and forgets the oldest first', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      await controller.submit('a');
      const refs: string[] = [];
      for (let i = 0; i < 1025; i++) {
        const ref = (await controller.submit('a')).requestRef;
        controller.cancel(ref);
        refs.push(ref);
      }
      await expect(controller.await(refs[0])).rejects.toMatchObject({ code: 'not_found' });
      await expect(controller.await(refs[1])).rejects.toMatchObject({ code: 'cancelled' });
      await expect(controller.await(refs[1024])).rejects.toMatchObject({ code: 'cancelled' });
    }, 60_000);

    it('unknown, released and cancelled-while-active refs are not_found', async () => {
      const { controller } = await setup();
      const released = granted(await controller.submit('a'));
      controller.release(released);
      const cancelled = granted(await controller.submit('a'));
      controller.cancel(cancelled.requestRef);
      for (const ref of ['request-AAAAAAAAAAAAAAAAAAAAAAAA', '', released.requestRef, cancelled.requestRef]) {
        const error = await controller.await(ref).catch((e: AdmissionError) => e);
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error).toMatchObject({ code: 'not_found' });
      }
    });
  });

  describe('§5.6 cancel and release', () => {
    it('cancel of a non-string throws invalid_request_ref', async () => {
      const { controller } = await setup();
      for (const ref of [undefined, null, 42, {}, ['request-x']]) {
        const error = thrown(() => controller.cancel(ref as string));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('invalid_request_ref');
      }
      expect((await controller.submit('a')).status).toBe('granted');
    });

    it('cancel of a queued request removes it exactly once', async () => {
      const { controller, clock, events, stateOf, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const ref = (await controller.submit('b')).requestRef;
      const waiting = controller.acquire('c');
      // c is queued before the cancel, as a synchronous submit leaves it
      await settle();
      const awaited = controller.await(ref);
      clock.advance(42);
      expect(controller.cancel(ref)).toBe(true);
      await expect(awaited).rejects.toMatchObject({ code: 'cancelled' });
      await settle();
      expect(events.at(-1)).toEqual({ wait_ms: 42, active: 1, queued: 1, outcome: 'cancelled', agent_id: 'b' });
      const status = controller.status();
      expect(controller.cancel(ref)).toBe(false);
      await settle();
      expect(controller.status()).toEqual(status);
      expect(events).toHaveLength(4);
      expect(await stateOf(waiting)).toBe('pending');
    });

    it('cancel of an active request revokes it exactly once and dispatches', async () => {
      const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const permit = granted(await controller.submit('a'));
      const waiting = controller.acquire('b');
      // b must be queued before the cancel, as a synchronous submit leaves it
      await settle();
      expect(controller.cancel(permit.requestRef)).toBe(true);
      expect(permit.signal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome: 'cancelled' } });
      const next = await waiting;
      await settle();
      const status = controller.status();
      expect(controller.cancel(permit.requestRef)).toBe(false);
      expect(controller.release(permit)).toBe(false);
      await settle();
      expect(controller.status()).toEqual(status);
      expect(status.active).toBe(1);
      expect(outcomes()).toEqual(['granted', 'queued', 'cancelled', 'granted']);
      expect(controller.release(next)).toBe(true);
    });

    it('cancel of an unknown ref returns false', async () => {
      const { controller, events, settle } = await setup();
      expect(controller.cancel('request-nope')).toBe(false);
      await settle();
      expect(events).toEqual([]);
    });

    it('release of a value that is not an object with a string id throws invalid_permit', async () => {
      const { controller } = await setup();
      const hostile = new Proxy(
        {},
        {
          get() {
            throw new Error('trap secret');
          },
        },
      );
      for (const value of [undefined, null, 'permit-x', 7, {}, { id: 7 }, { id: null }, hostile]) {
        const error = thrown(() => controller.release(value as Permit));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('invalid_permit');
      }
      expect(controller.release({ id: 'permit-unknown' } as Permit)).toBe(false);
    });

    it('double release returns false the second time and changes no count', async () => {
      const { controller, events, settle } = await setup();
      const permit = granted(await controller.submit('a'));
      granted(await controller.submit('a'));
      expect(controller.release(permit)).toBe(true);
      await settle();
      const status = controller.status();
      expect(controller.release(permit)).toBe(false);
      await settle();
      expect(controller.status()).toEqual(status);
      expect(status.active).toBe(1);
      expect(events.map((event) => event.outcome)).toEqual(['granted', 'granted', 'released']);
    });

    it('a revoke reports wait_ms as the total time since submit and drops an idle agent', async () => {
      const { controller, clock, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      const waiting = controller.acquire('b');
      await settle();
      clock.advance(100);
      controller.release(first);
      const permit = await waiting;
      clock.advance(50);
      controller.release(permit);
      await settle();
      expect(events.at(-1)).toEqual({ wait_ms: 150, active: 0, queued: 0, outcome: 'released', agent_id: 'b' });
      expect(Object.keys(controller.status().per_agent)).toEqual([]);
    });
  });
});
