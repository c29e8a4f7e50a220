import { getEventListeners } from 'node:events';
import { runInThisContext } from 'node:vm';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionDecisionEvent, AdmissionStatus, SubmitResult } from '../../src/admission/admission.types';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, admissionSuite, granted } from '../support/admission-controller-fixture';
import { seededRandom } from '../../src/shared/testing/seeded-random';

const tag = (events: AdmissionDecisionEvent[]) => events.map((event) => `${event.outcome}:${event.agent_id}`);

const ignore = () => undefined;

/** The first broken limit or count in a status, or `undefined` (plain code: it runs on every event of the walks). */
function limitViolation(status: AdmissionStatus, config: Required<Pick<AdmissionConfig, 'globalLimit' | 'maxQueue'>>): string | undefined {
  if (status.active > config.globalLimit) return `active ${status.active} > globalLimit`;
  if (status.queue_length > config.maxQueue) return `queue_length ${status.queue_length} > maxQueue`;
  let active = 0;
  let queued = 0;
  for (const [id, agent] of Object.entries(status.per_agent)) {
    if (agent.active > agent.limit) return `agent ${id} active ${agent.active} > limit ${agent.limit}`;
    if (agent.active + agent.queued === 0) return `agent ${id} listed without work`;
    active += agent.active;
    queued += agent.queued;
  }
  if (active !== status.active || queued !== status.queue_length) return 'per_agent totals differ from the totals';
  return undefined;
}

function expectWithinLimits(status: AdmissionStatus, config: Required<Pick<AdmissionConfig, 'globalLimit' | 'maxQueue'>>): void {
  expect(limitViolation(status, config)).toBeUndefined();
}


describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const suite = admissionSuite(variantName);
  const { localOnly, variant } = suite;
  /** The fixture, with outcomes tagged by agent (`granted:a`). */
  const setup = async (config: AdmissionConfig = {}, clock?: ManualClock) => {
    const fixture = await suite.setup(config, clock);
    return { ...fixture, outcomes: () => tag(fixture.events) };
  };

  describe('§9 Side effects and re-entrancy', () => {
    it("a revoke's released precedes the granted it caused, and its permit.signal abort comes first", async () => {
      const { controller, listeners, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const log: string[] = [];
      listeners.push((event) => log.push(`${event.outcome}:${event.agent_id}`));
      const first = granted(await controller.submit('a'));
      first.signal.addEventListener('abort', () => log.push('abort:a'));
      const waiting = controller.acquire('b').then((permit) => (log.push('resolved:b'), permit));
      await settle();
      log.length = 0;
      controller.release(first);
      await waiting;
      await settle();
      expect(log).toEqual(['abort:a', 'released:a', 'granted:b', 'resolved:b']);
    });

    // local only: it reads status() inside the effects of one synchronous release; a cluster release
    // returns before the decision that grants the next request
    localOnly('effects run once the whole operation left the state consistent', async () => {
      const { controller, listeners } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      await controller.submit('b');
      const seen: Array<[string, number, number]> = [];
      first.signal.addEventListener('abort', () => {
        const status = controller.status();
        seen.push(['abort', status.active, status.queue_length]);
      });
      listeners.push((event) => {
        const status = controller.status();
        seen.push([event.outcome, status.active, status.queue_length]);
      });
      controller.release(first);
      expect(seen).toEqual([
        ['abort', 1, 0],
        ['released', 1, 0],
        ['granted', 1, 0],
      ]);
    });

    it('telemetry listeners that call release, submit and cancel see consistent state and start new operations', async () => {
      const config = { globalLimit: 2, maxQueue: 10 };
      const { controller, listeners, events, outcomes, settle } = await setup({ ...config, overflow: 'queue' });
      const pa = granted(await controller.submit('a'));
      const pc = granted(await controller.submit('c'));
      const b1 = (await controller.submit('b')).requestRef;
      const bWait = controller.await(b1);
      await controller.submit('d');
      const inside: AdmissionStatus[] = [];
      const answers: Array<SubmitResult | Promise<SubmitResult>> = [];
      listeners.push((event) => {
        inside.push(controller.status());
        if (event.outcome === 'granted' && event.agent_id === 'b') expect(controller.release(pc)).toBe(true);
        if (event.outcome === 'released' && event.agent_id === 'c') answers.push(controller.submit('e'));
        if (event.outcome === 'queued' && event.agent_id === 'e') expect(controller.cancel(b1)).toBe(true);
      });
      const before = events.length;
      controller.release(pa);
      await settle();
      expect(outcomes().slice(before)).toEqual([
        'released:a',
        'granted:b',
        'released:c',
        'granted:d',
        'queued:e',
        'cancelled:b',
        'granted:e',
      ]);
      expect(answers).toHaveLength(1);
      expect((await answers[0]).status).toBe('queued');
      inside.forEach((status) => expectWithinLimits(status, config));
      const final = controller.status();
      expect(final).toMatchObject({ active: 2, queue_length: 0 });
      expect(Object.keys(final.per_agent).sort()).toEqual(['d', 'e']);
      const bPermit = await bWait;
      expect(bPermit.signal.reason).toMatchObject({ details: { outcome: 'cancelled' } });
      const grants = events.filter((event) => event.outcome === 'granted').length;
      const revokes = events.filter((event) => ['released', 'cancelled', 'owner_down'].includes(event.outcome)).length;
      expect(grants - revokes).toBe(final.active);
    });

    it('an abort listener on permit.signal may call back into the controller', async () => {
      const { controller, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
      const first = granted(await controller.submit('a'));
      let inner: SubmitResult | Promise<SubmitResult> | undefined;
      first.signal.addEventListener('abort', () => (inner = controller.submit('b')));
      controller.release(first);
      expect((await inner)?.status).toBe('granted');
      await settle();
      expect(controller.status()).toMatchObject({ active: 1, per_agent: { b: { active: 1, queued: 0, limit: 64 } } });
    });

    it('an owner abort listener registered before the controller may release the permit first', async () => {
      const { controller, outcomes, settle } = await setup();
      const owner = new AbortController();
      let permit!: Permit;
      owner.signal.addEventListener('abort', () => controller.release(permit));
      permit = granted(await controller.submit('a', { owner: owner.signal }));
      owner.abort();
      await settle();
      expect(outcomes()).toEqual(['granted:a', 'released:a']);
      expect(controller.status().active).toBe(0);
    });

    it('no operation produces an unhandled promise rejection when nobody awaits', async () => {
      // Jest hands tests a copy of `process`; the host process is where Node reports unhandled rejections.
      const hostProcess = runInThisContext('process') as NodeJS.Process;
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      hostProcess.on('unhandledRejection', onUnhandled);
      try {
        const emitRejects = { emit: () => Promise.reject(new Error('async sink')) };
        const { controller, clock, settle } = await suite.setup({ globalLimit: 1, overflow: 'queue', maxQueue: 4 }, new ManualClock(), emitRejects);
        const held = granted(await controller.submit('a'));
        controller.acquire('');
        controller.acquire('a', { overflow: 'reject' });
        controller.acquire('a', { deadline: 0 });
        controller.acquire('a', { signal: AbortSignal.abort() });
        controller.acquire('a', { owner: AbortSignal.abort() });
        controller.acquire('a', { queueTimeoutMs: 5 });
        // refused submits whose promise nobody awaits (a local submit throws instead)
        for (const opts of [{ overflow: 'reject' as const }, { deadline: 0 }]) {
          try {
            controller.submit('a', opts);
          } catch {
            // the local controller's refusal
          }
        }
        const cancelled = (await controller.submit('a')).requestRef;
        controller.acquire('a');
        controller.await(cancelled);
        controller.await(cancelled, 1);
        controller.await(cancelled, 0);
        controller.await('request-unknown');
        controller.await(5 as never);
        controller.run('a', () => 1, { overflow: 'reject' });
        controller.run('a', 'no fn' as never);
        controller.cancel(cancelled);
        controller.acquire('a', { overflow: 'queue', maxQueue: 0 } as never);
        clock.advance(5);
        controller.drain(-1);
        controller.drain(10);
        clock.advance(10);
        controller.release(held);
        controller.run('b', () => {
          throw new Error('fn failed');
        });
        controller.run('b', async () => Promise.reject(new Error('async fn failed')));
        await settle();
        for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      } finally {
        hostProcess.off('unhandledRejection', onUnhandled);
      }
      expect(unhandled).toEqual([]);
    });
  });

  describe('§10 Data structures and complexity', () => {
    it('a long-lived shared signal holds no more abort listeners than live entries', async () => {
      const { controller, settle } = await setup({ globalLimit: 5, overflow: 'queue', defaultQueueTimeoutMs: 'infinity' });
      const owner = new AbortController();
      const caller = new AbortController();
      const count = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;
      const opts = { owner: owner.signal, signal: caller.signal };
      for (let round = 0; round < 50; round++) {
        const permit = await controller.acquire('a', opts);
        controller.release(permit);
      }
      await settle();
      expect([count(owner.signal), count(caller.signal)]).toEqual([0, 0]);
      const results: SubmitResult[] = [];
      for (let i = 0; i < 200; i++) results.push(await controller.submit('a', opts));
      expect([count(owner.signal), count(caller.signal)]).toEqual([200, 195]);
      results.slice(100).forEach((result) => controller.cancel(result.requestRef));
      expect([count(owner.signal), count(caller.signal)]).toEqual([100, 95]);
      const permits = results.slice(0, 5).map((result) => granted(result));
      permits.forEach((permit) => controller.release(permit));
      await settle();
      expect([count(owner.signal), count(caller.signal)]).toEqual([95, 90]);
      controller.beginDrain();
      await settle();
      expect(controller.status().active).toBe(5);
      expect([count(owner.signal), count(caller.signal)]).toEqual([5, 0]);
      owner.abort();
      expect(controller.status().active).toBe(0);
      expect(count(caller.signal)).toBe(0);
    }, 60_000);

    it('one signal as owner and signal takes one listener per queued entry', async () => {
      const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const both = new AbortController();
      for (let i = 0; i < 10; i++) await controller.submit('a', { owner: both.signal, signal: both.signal });
      expect(getEventListeners(both.signal, 'abort')).toHaveLength(10);
      both.abort();
      expect(getEventListeners(both.signal, 'abort')).toHaveLength(0);
      expect(controller.status().queue_length).toBe(0);
    });

    it('many queued deadlines share one timer', async () => {
      const { controller, clock, timers, settle } = await setup({ globalLimit: 1, overflow: 'queue', maxQueue: 2000 });
      granted(await controller.submit('a'));
      for (let i = 0; i < 1000; i++) await controller.submit(`agent-${i % 37}`, { queueTimeoutMs: 1 + ((i * 7919) % 5000) });
      expect(timers()).toBe(1);
      clock.advance(2500);
      await settle();
      expect(timers()).toBe(1);
      clock.advance(2500);
      await settle();
      expect(timers()).toBe(0);
      expect(controller.status().queue_length).toBe(0);
    }, 60_000);

    // local only: a complexity check (5000 queued requests); on the cluster each is a database transaction
    localOnly('a long queue of a blocked agent does not hold back another agent', async () => {
      const { controller } = await setup({ globalLimit: 2, agentLimits: { blocked: 1 }, overflow: 'queue', maxQueue: 10_000 });
      granted(await controller.submit('blocked'));
      const other = granted(await controller.submit('other'));
      for (let i = 0; i < 5000; i++) await controller.submit('blocked');
      const free = controller.acquire('free');
      controller.release(other);
      await expect(free).resolves.toMatchObject({ agentId: 'free' });
      expect(controller.status().per_agent.blocked).toEqual({ active: 1, queued: 5000, limit: 1 });
    });
  });

  describe('§11 Invariants (seeded interleavings)', () => {
    it.each([1, 2, 3, 4])('limits, accounting and eligibility hold on every step (seed %i)', async (seed) => {
      const random = seededRandom(seed);
      const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
      const config = { globalLimit: 4, maxQueue: 6, agentLimits: { a: 1, b: 2 }, defaultAgentLimit: 3 };
      const { controller, clock, events, listeners, settle } = await setup({ ...config, overflow: 'queue' });
      const violations: string[] = [];
      listeners.push(() => {
        const violation = limitViolation(controller.status(), config);
        if (violation) violations.push(violation);
      });
      const telemetry = new TelemetryCounter();
      const agents = ['a', 'b', 'c'];
      const permits: Permit[] = [];
      const refs: string[] = [];
      const owners: AbortController[] = [];
      const aborts = new Map<Permit, number>();
      const trues = new Map<string, number>();
      const countTrue = (key: string, result: boolean) => result && trues.set(key, (trues.get(key) ?? 0) + 1);
      const track = (permit: Permit) => {
        if (aborts.has(permit)) return;
        aborts.set(permit, 0);
        permits.push(permit);
        permit.signal.addEventListener('abort', () => aborts.set(permit, (aborts.get(permit) ?? 0) + 1));
      };
      for (let step = 0; step < 400; step++) {
        const roll = random();
        if (roll < 0.35) {
          const owner = new AbortController();
          owners.push(owner);
          try {
            const result = await controller.submit(pick(agents), { owner: owner.signal, queueTimeoutMs: pick([0, 5, 50, 'infinity'] as const) });
            refs.push(result.requestRef);
            if (result.status === 'granted') track(result.permit);
            else controller.await(result.requestRef).then(track, ignore);
          } catch {
            // refusals are part of the walk
          }
        } else if (roll < 0.55 && permits.length > 0) {
          const permit = pick(permits);
          countTrue(permit.id, controller.release(permit));
        } else if (roll < 0.7 && refs.length > 0) {
          const ref = pick(refs);
          countTrue(ref, controller.cancel(ref));
        } else if (roll < 0.8 && owners.length > 0) {
          pick(owners).abort();
        } else {
          clock.advance(pick([1, 5, 20]));
        }
        if (variant.synchronous) for (let tick = 0; tick < 4; tick++) await Promise.resolve();
        else await settle();
        const status = controller.status();
        const violation = limitViolation(status, config);
        if (violation) violations.push(`step ${step}: ${violation}`);
        const eligibleWaiting = Object.values(status.per_agent).some((agent) => agent.queued > 0 && agent.active < agent.limit);
        if (eligibleWaiting && status.active < config.globalLimit) violations.push(`step ${step}: an eligible request waits`);
        const { grants, revocations, active } = telemetry.count(events);
        if (grants - revocations !== status.active || active !== status.active) violations.push(`step ${step}: telemetry counts differ`);
        if (violations.length > 0) break;
      }
      expect(violations).toEqual([]);
      for (const count of aborts.values()) expect(count).toBeLessThanOrEqual(1);
      for (const count of trues.values()) expect(count).toBe(1);
      const totalAborts = [...aborts.values()].reduce((sum, count) => sum + count, 0);
      expect(totalAborts).toBe(telemetry.count(events).revocations);
      expect(totalAborts).toBeGreaterThan(10);
    }, 60_000);
  });
});

/**
 * Grants and revocations counted from the payloads alone: each event carries the totals after its
 * transition, so `active` rises by one exactly on `granted` and falls by one exactly on a revocation.
 */
class TelemetryCounter {
  private seen = 0;
  private grants = 0;
  private revocations = 0;
  private active = 0;

  count(events: AdmissionDecisionEvent[]) {
    for (; this.seen < events.length; this.seen++) {
      const event = events[this.seen];
      const delta = event.active - this.active;
      const allowed =
        event.outcome === 'granted' ? [1] : event.outcome === 'released' ? [-1] : event.outcome === 'cancelled' || event.outcome === 'owner_down' ? [0, -1] : [0];
      if (!allowed.includes(delta)) throw new Error(`${event.outcome} moved active by ${delta}`);
      if (delta === 1) this.grants++;
      if (delta === -1) this.revocations++;
      this.active = event.active;
    }
    return { grants: this.grants, revocations: this.revocations, active: this.active };
  }
}
