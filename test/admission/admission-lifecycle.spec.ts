import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionService } from '../../src/admission/admission-service';
import { AdmissionError, type AdmissionErrorCode } from '../../src/admission/admission.errors';
import type { AdmissionOutcome } from '../../src/admission/admission.types';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, admissionSuite, granted, refusal, thrown, type AdmissionFixture } from '../support/admission-controller-fixture';

/** A manual clock that can be skewed backwards, to show that wait_ms never goes negative. */
class SkewableClock extends ManualClock {
  skew = 0;
  override monotonicNow(): number {
    return super.monotonicNow() + this.skew;
  }
}

describe('§7 Errors', () => {
  it('AdmissionError is an Error with a code, a name and optional frozen details', () => {
    const error = new AdmissionError('admission_queue_full', { max_queue: 3 });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('AdmissionError');
    expect(error.code).toBe('admission_queue_full');
    expect(error.details).toEqual({ max_queue: 3 });
    expect(Object.isFrozen(error.details)).toBe(true);
    expect(new AdmissionError('not_found').details).toBeUndefined();
  });
});

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  /**
   * A controller at its global limit of 1 (held by "blocker"), and a request of "subject" that waited
   * 37.9 ms in the queue. Returns what is needed to drive each lifecycle row.
   */
  async function queuedSubject() {
    const ctx = await setup({ globalLimit: 1, overflow: 'queue' });
    const blocker = granted(await ctx.controller.submit('blocker'));
    const owner = new AbortController();
    const caller = new AbortController();
    const ref = (await ctx.controller.submit('subject', { owner: owner.signal, signal: caller.signal, queueTimeoutMs: 1000 })).requestRef;
    const seen = ctx.controller.await(ref).then(
      (permit) => ({ permit }),
      (error: unknown) => ({ error }),
    );
    ctx.clock.advance(37.9);
    return { ...ctx, blocker, owner, caller, ref, seen, subject: () => ctx.events.filter((event) => event.agent_id === 'subject') };
  }
  type Subject = Awaited<ReturnType<typeof queuedSubject>>;

  describe('§6 Request lifecycle', () => {
    describe('from submit', () => {
      it.each<[string, AdmissionConfig, AdmissionOutcome, string]>([
        ['capacity', {}, 'granted', 'granted'],
        ['no capacity, reject', { globalLimit: 1 }, 'rejected', 'concurrency_limit_reached'],
        ['queue full', { globalLimit: 1, overflow: 'queue', maxQueue: 0 }, 'queue_full', 'admission_queue_full'],
        ['deadline past', { globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 0 }, 'expired', 'queue_deadline_exceeded'],
        ['accepted into queue', { globalLimit: 1, overflow: 'queue' }, 'queued', 'queued'],
      ])('%s: one %s event with wait_ms 0', async (_, config, outcome, seen) => {
        const { controller, clock, events, settle } = await setup(config);
        if (config.globalLimit === 1) granted(await controller.submit('blocker'));
        clock.advance(25);
        let answer: string;
        try {
          answer = (await controller.submit('subject')).status;
        } catch (error) {
          answer = (error as AdmissionError).code;
        }
        expect(answer).toBe(seen);
        await settle();
        const subject = events.filter((event) => event.agent_id === 'subject');
        expect(subject).toEqual([expect.objectContaining({ outcome, wait_ms: 0 })]);
      });

      it('signal / owner already aborted: signal.reason / owner_down, outcome per §4, wait_ms 0', async () => {
        const { controller, events, settle } = await setup();
        const reason = new Error('r');
        expect(await refusal(() => controller.submit('s', { signal: AbortSignal.abort(reason) }))).toBe(reason);
        expect(await refusal(() => controller.submit('o', { owner: AbortSignal.abort() }))).toMatchObject({ code: 'owner_down' });
        await settle();
        expect(events.map((event) => [event.agent_id, event.outcome, event.wait_ms])).toEqual([
          ['s', 'requester_down', 0],
          ['o', 'owner_down', 0],
        ]);
      });

      it('submits refused while draining or for invalid input emit nothing', async () => {
        const { controller, events, settle } = await setup();
        await refusal(() => controller.submit(''));
        await refusal(() => controller.submit('a', { overflow: 'x' } as never));
        controller.beginDrain();
        await refusal(() => controller.submit('a'));
        await settle();
        expect(events).toEqual([]);
      });
    });

    describe('from queued', () => {
      it.each<[string, (s: Subject) => void, AdmissionOutcome, AdmissionErrorCode | 'permit' | 'signal.reason']>([
        ['dispatched', (s) => s.controller.release(s.blocker), 'granted', 'permit'],
        ['deadline', (s) => s.clock.advance(1000 - 37.9), 'expired', 'queue_deadline_exceeded'],
        ['cancel(ref)', (s) => s.controller.cancel(s.ref), 'cancelled', 'cancelled'],
        ['owner aborts', (s) => s.owner.abort(), 'owner_down', 'owner_down'],
        ['signal aborts', (s) => s.caller.abort(new Error('signal reason')), 'requester_down', 'signal.reason'],
        ['beginDrain', (s) => s.controller.beginDrain(), 'deployment_draining', 'deployment_draining'],
      ])('%s: the caller sees the outcome, one %s event with wait_ms since submit', async (_, event, outcome, callerSees) => {
        const s = await queuedSubject();
        event(s);
        const seen = await s.seen;
        if (callerSees === 'permit') expect('permit' in seen && seen.permit.requestRef).toBe(s.ref);
        else if (callerSees === 'signal.reason') expect('error' in seen && seen.error).toBe(s.caller.signal.reason);
        else expect('error' in seen && seen.error).toMatchObject({ code: callerSees });
        await s.settle();
        const expectedWait = outcome === 'expired' ? 1000 : 37;
        expect(s.subject()).toEqual([
          expect.objectContaining({ outcome: 'queued', wait_ms: 0 }),
          expect.objectContaining({ outcome, wait_ms: expectedWait }),
        ]);
      });

      it.each(['cancel', 'owner', 'signal', 'deadline', 'drain'])('after leaving the queue by %s no other exit emits again', async (first) => {
        const s = await queuedSubject();
        const exits: Record<string, () => void> = {
          cancel: () => s.controller.cancel(s.ref),
          owner: () => s.owner.abort(),
          signal: () => s.caller.abort(),
          deadline: () => s.clock.advance(5000),
          drain: () => s.controller.beginDrain(),
        };
        exits[first]();
        await s.settle();
        const after = s.subject().length;
        for (const exit of Object.values(exits)) exit();
        s.controller.release(s.blocker);
        await s.settle();
        expect(s.subject()).toHaveLength(after);
        expect(after).toBe(2);
        expect(s.controller.status().queue_length).toBe(0);
      });
    });

    describe('from active', () => {
      it.each<[string, (c: AdmissionService, p: Permit, owner: AbortController) => void, AdmissionOutcome]>([
        ['release', (c, p) => c.release(p), 'released'],
        ['cancel', (c, p) => c.cancel(p.requestRef), 'cancelled'],
        ['owner abort', (_c, _p, owner) => owner.abort(), 'owner_down'],
      ])('%s: permit.signal aborts, one %s event with wait_ms since submit, then nothing more', async (_, revoke, outcome) => {
        const { controller, clock, events, settle } = await setup();
        const owner = new AbortController();
        const permit = granted(await controller.submit('a', { owner: owner.signal }));
        clock.advance(12.5);
        revoke(controller, permit, owner);
        expect(permit.signal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome } });
        await settle();
        expect(events).toEqual([
          { wait_ms: 0, active: 1, queued: 0, outcome: 'granted', agent_id: 'a' },
          { wait_ms: 12, active: 0, queued: 0, outcome, agent_id: 'a' },
        ]);
        controller.release(permit);
        controller.cancel(permit.requestRef);
        owner.abort();
        await settle();
        expect(events).toHaveLength(2);
      });

      it('a granted request is still active until revoked', async () => {
        const { controller, clock, events, settle } = await setup({ defaultQueueTimeoutMs: 10 });
        granted(await controller.submit('a', { owner: new AbortController().signal }));
        clock.advance(10_000);
        await settle();
        expect(controller.status().active).toBe(1);
        expect(events).toHaveLength(1);
      });
    });
  });

  describe('§7 Errors', () => {
    it('codes without details carry none', async () => {
      const { controller, clock } = await setup({ globalLimit: 1, overflow: 'queue' });
      const permit = granted(await controller.submit('a'));
      const errors: unknown[] = [
        await refusal(() => controller.submit('a', { deadline: 0 })),
        thrown(() => controller.cancel(1 as never)),
        thrown(() => controller.release(null as never)),
        await controller.await(1 as never).catch((e) => e),
        await controller.await('request-x').catch((e) => e),
        await controller.drain(-1).catch((e) => e),
      ];
      const ref = (await controller.submit('a')).requestRef;
      errors.push(await controller.await(ref, 0).catch((e) => e));
      controller.cancel(ref);
      errors.push(await controller.await(ref).catch((e) => e));
      errors.push(await refusal(() => controller.submit('a', { owner: AbortSignal.abort() })));
      controller.beginDrain();
      errors.push(await refusal(() => controller.submit('a')));
      clock.advance(1);
      expect(errors.map((e) => (e as AdmissionError).code)).toEqual([
        'queue_deadline_exceeded',
        'invalid_request_ref',
        'invalid_permit',
        'invalid_await',
        'not_found',
        'invalid_drain_timeout',
        'await_timeout',
        'cancelled',
        'owner_down',
        'deployment_draining',
      ]);
      for (const error of errors) {
        expect(error).toBeInstanceOf(AdmissionError);
        expect((error as AdmissionError).details).toBeUndefined();
      }
      controller.release(permit);
    });

    it('malformed input at every public entry point gets a typed error and the controller keeps serving', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const held = granted(await controller.submit('a'));
      const queuedRef = (await controller.submit('b', { deadline: 'infinity' })).requestRef;
      const before = controller.status();
      const trap = () => {
        throw new Error('trap');
      };
      const hostile = new Proxy({}, { get: trap, getPrototypeOf: trap, ownKeys: trap });
      const common = [null, NaN, [], hostile, Symbol('s')];
      const syncCalls: Array<[unknown[], (value: never) => unknown]> = [
        [[...common, undefined, 0, {}, () => 1], (value) => controller.cancel(value)],
        [[...common, undefined, 0, '', {}, () => 1, { id: 1 }], (value) => controller.release(value)],
        [[...common, undefined, -1, 1.5, '', {}, () => 1], (value) => controller.deadlineAfter(value)],
      ];
      // submit refuses by throwing (local) or by rejecting (cluster)
      const refusedCalls: Array<[unknown[], (value: never) => unknown]> = [
        [[...common, undefined, 0, '', 'x'.repeat(300), 'lone\uD800', {}, () => 1], (value) => controller.submit(value)],
        [[...common, 0, '', 'queue', new Map(), () => 1, { overflow: 'x' }, { deadline: NaN }], (value) => controller.submit('c', value)],
      ];
      const asyncCalls: Array<[unknown[], (value: never) => Promise<unknown>]> = [
        [[...common, undefined, 0, '', {}, () => 1], (value) => controller.acquire(value)],
        [[...common, 0, '', new Map(), { queueTimeoutMs: -1 }], (value) => controller.acquire('c', value)],
        [[...common, undefined, 0, {}, () => 1], (value) => controller.await(value)],
        [[...common, -1, 1.5, '', '5', {}, () => 1], (value) => controller.await(queuedRef, value)],
        [[...common, undefined, 0, ''], (value) => controller.run(value, () => 1)],
        [[...common, undefined, 0, '', {}], (value) => controller.run('c', value)],
      ];
      const codes = new Set<string>();
      const note = (error: unknown) => {
        expect(error).toBeInstanceOf(AdmissionError);
        codes.add((error as AdmissionError).code);
      };
      for (const [values, call] of syncCalls) {
        for (const value of values) note(thrown(() => call(value as never)));
      }
      for (const [values, call] of refusedCalls) {
        for (const value of values) note(await refusal(() => call(value as never)));
      }
      for (const [values, call] of asyncCalls) {
        for (const value of values) {
          let promise: Promise<unknown> | undefined;
          expect(() => (promise = call(value as never))).not.toThrow();
          note(await (promise as Promise<unknown>).then(() => 'resolved', (error: unknown) => error));
        }
      }
      expect([...codes].sort()).toEqual(['invalid_admission_options', 'invalid_await', 'invalid_permit', 'invalid_request_ref']);
      await settle();
      expect(controller.status()).toEqual(before);
      expect(events.map((event) => event.outcome)).toEqual(['granted', 'queued']);
      await expect(controller.drain('soon' as never)).rejects.toMatchObject({ code: 'invalid_drain_timeout' });
      expect(controller.status().draining).toBe(false);
      controller.release(held);
      await expect(controller.await(queuedRef)).resolves.toMatchObject({ agentId: 'b' });
    });

    it('messages and details never carry agent input, signal reasons or permit ids', async () => {
      const { controller, clock, settle } = await setup({ globalLimit: 2, overflow: 'queue', maxQueue: 1, agentLimits: { 'secret-agent': 1 } });
      const permit = granted(await controller.submit('secret-agent'));
      const errors: unknown[] = [
        await refusal(() => controller.submit('secret-agent', { overflow: 'reject' })),
        await refusal(() => controller.submit('secret-agent', { deadline: 0 })),
      ];
      await controller.submit('secret-agent');
      errors.push(await refusal(() => controller.submit('secret-agent')));
      errors.push(await refusal(() => controller.submit('secret-agent', { owner: AbortSignal.abort(new Error('owner secret')) })));
      errors.push(await refusal(() => controller.submit('secret-agent\uD800')));
      errors.push(await refusal(() => controller.submit('secret-agent', { overflow: 'secret-mode' } as never)));
      controller.release(permit);
      errors.push(permit.signal.reason);
      // the release grants the queued request before the drain, as a synchronous release does
      await settle();
      const draining = controller.drain(5).catch((e) => e);
      clock.advance(5);
      errors.push(await draining);
      for (const error of errors) {
        expect(error).toBeInstanceOf(AdmissionError);
        const text = `${(error as Error).message} ${JSON.stringify((error as AdmissionError).details ?? {})} ${(error as Error).stack}`;
        for (const secret of ['secret', permit.id, permit.requestRef, 'permit-', 'request-']) expect(text).not.toContain(secret);
      }
    });
  });

  describe('§8 Telemetry', () => {
    it('emits agent_runtime.admission.decision with a frozen payload of exactly the documented keys', async () => {
      const { controller, recorded, settle } = await setup();
      granted(await controller.submit('a'));
      await settle();
      expect(recorded).toHaveLength(1);
      expect(recorded[0].name).toBe('agent_runtime.admission.decision');
      expect(Object.keys(recorded[0].payload).sort()).toEqual(['active', 'agent_id', 'outcome', 'queued', 'wait_ms']);
      expect(Object.isFrozen(recorded[0].payload)).toBe(true);
    });

    it('active and queued are the totals after the transition', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 2, overflow: 'queue' });
      const a = granted(await controller.submit('a'));
      granted(await controller.submit('b'));
      const waiting = controller.acquire('c');
      // the refusal below must be decided after c was queued, as a synchronous submit leaves it
      await settle();
      await refusal(() => controller.submit('d', { overflow: 'reject' }));
      controller.release(a);
      await waiting;
      await settle();
      expect(events.map(({ outcome, active, queued }) => [outcome, active, queued])).toEqual([
        ['granted', 1, 0],
        ['granted', 2, 0],
        ['queued', 2, 1],
        ['rejected', 2, 1],
        ['released', 1, 1],
        ['granted', 2, 0],
      ]);
    });

    it('totals stay those after each transition when releases follow one another', async () => {
      const { controller, events, settle } = await setup({ globalLimit: 2, overflow: 'queue' });
      const a = granted(await controller.submit('a'));
      const b = granted(await controller.submit('b'));
      const waiting = controller.acquire('c');
      await settle();
      controller.release(a);
      controller.release(b);
      await waiting;
      await settle();
      // every event moves the totals by its own transition, and the last one leaves what status() shows
      const moves: Record<string, string[]> = { granted: ['1,0', '1,-1'], queued: ['0,1'], released: ['-1,0'] };
      const steps = events.map((event) => `${event.outcome}:${event.agent_id} active ${event.active} queued ${event.queued}`);
      const wrong = events.filter((event, i) => {
        const before = events[i - 1] ?? { active: 0, queued: 0 };
        return !moves[event.outcome]?.includes(`${event.active - before.active},${event.queued - before.queued}`);
      });
      expect({ steps, wrong: wrong.map((event) => steps[events.indexOf(event)]) }).toMatchObject({ wrong: [] });
      const last = events.at(-1);
      expect({ active: last?.active, queued: last?.queued }).toEqual({ active: controller.status().active, queued: controller.status().queue_length });
      expect(controller.status()).toMatchObject({ active: 1, queue_length: 0 });
    });

    it('wait_ms is whole milliseconds, floored and never negative', async () => {
      const clock = new SkewableClock();
      const { controller, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' }, clock);
      const permit = granted(await controller.submit('a'));
      const ref = (await controller.submit('b')).requestRef;
      clock.advance(10.99);
      controller.cancel(ref);
      clock.skew = -500;
      controller.release(permit);
      await settle();
      expect(events.map((event) => event.wait_ms)).toEqual([0, 0, 10, 0]);
      expect(events.every((event) => Number.isInteger(event.wait_ms))).toBe(true);
    });

    it('a throwing sink is caught and ignored', async () => {
      const { controller, listeners, settle }: AdmissionFixture = await setup({ globalLimit: 1, overflow: 'queue' });
      const emit = jest.fn(() => {
        throw new Error('sink broke');
      });
      listeners.push(emit);
      const permit = await controller.acquire('a');
      const waiting = controller.acquire('b');
      await settle();
      expect(controller.release(permit)).toBe(true);
      await expect(waiting).resolves.toMatchObject({ agentId: 'b' });
      await settle();
      expect(emit).toHaveBeenCalledTimes(4);
      expect(controller.status()).toMatchObject({ active: 1, queue_length: 0 });
    });

    it('payloads never carry request refs, permit ids, reasons or content', async () => {
      const { controller, clock, events, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const permit = granted(await controller.submit('a'));
      const caller = new AbortController();
      const refs = [permit.requestRef, (await controller.submit('b', { signal: caller.signal })).requestRef, (await controller.submit('c', { queueTimeoutMs: 5 })).requestRef];
      caller.abort(new Error('reason text'));
      clock.advance(5);
      const next = controller.acquire('d');
      await settle();
      controller.release(permit);
      const other = await next;
      controller.cancel(other.requestRef);
      await settle();
      const json = JSON.stringify(events);
      for (const secret of ['request-', 'permit-', 'reason text', permit.id, other.id, ...refs]) expect(json).not.toContain(secret);
      for (const event of events) {
        expect(Object.values(event).every((value) => typeof value === 'number' || typeof value === 'string')).toBe(true);
      }
      expect(events.map((event) => event.outcome)).toEqual(['granted', 'queued', 'queued', 'requester_down', 'expired', 'queued', 'released', 'granted', 'cancelled']);
    });
  });
});
