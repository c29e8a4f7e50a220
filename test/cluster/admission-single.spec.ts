import type { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import type { SubmitResult } from '../../src/admission/admission.types';
import { ClusterAdmissionController } from '../../src/admission/cluster/cluster-admission-controller';
import { rejected } from '../../src/shared/testing/rejected';
import { thrown } from '../../src/shared/testing/thrown';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { clusterNode, rowCounts, tick } from './admission-fixture';

const granted = (result: SubmitResult): Permit => {
  if (result.status !== 'granted') throw new Error('expected a grant');
  return result.permit;
};

describe('ClusterAdmissionController on one instance (spec 01 rules over the database)', () => {
  const h = useHarness(() => openDatabaseHarness());
  const node = (config: Parameters<typeof clusterNode>[2], clock = new ManualClock()) => clusterNode(h(), 'adm-one', config, { clock });

  describe('§5.1 submit', () => {
    it('grants at once and writes the permit row; telemetry granted with cluster totals', async () => {
      const { controller, events } = await node({ globalLimit: 2 });
      const result = await controller.submit('agent-a');
      const permit = granted(result);
      expect(permit.agentId).toBe('agent-a');
      expect(permit.id).toMatch(/^permit-[A-Za-z0-9_-]{24}$/);
      expect(result.requestRef).toMatch(/^request-[A-Za-z0-9_-]{24}$/);
      expect(await h().sql('SELECT permit_id, request_id, agent_id, instance_id FROM agent_runtime_admission_permits')).toEqual([
        { permit_id: permit.id, request_id: result.requestRef, agent_id: 'agent-a', instance_id: 'adm-one' },
      ]);
      expect(events).toEqual([{ wait_ms: 0, active: 1, queued: 0, outcome: 'granted', agent_id: 'agent-a' }]);
      const status = controller.status();
      expect(status).toMatchObject({ active: 1, available: 1, queue_length: 0, instances_live: 1, instance: { active: 1, queued: 0 } });
      expect(status.per_agent['agent-a']).toEqual({ active: 1, queued: 0, limit: 64 });
      expect(Object.isFrozen(status)).toBe(true);
    });

    it('rejects with limit_scope agent, then global', async () => {
      const { controller, outcomes } = await node({ globalLimit: 2, defaultAgentLimit: 1 });
      await controller.submit('a');
      const agentScope = await rejected<AdmissionError>(controller.submit('a'));
      expect(agentScope).toMatchObject({ code: 'concurrency_limit_reached', details: { limit_scope: 'agent' } });
      await controller.submit('b');
      const globalScope = await rejected<AdmissionError>(controller.submit('c'));
      expect(globalScope).toMatchObject({ code: 'concurrency_limit_reached', details: { limit_scope: 'global' } });
      expect(outcomes()).toEqual(['granted', 'rejected', 'granted', 'rejected']);
    });

    it('queues, and reports queue full before an expired deadline', async () => {
      const clock = new ManualClock();
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue', maxQueue: 1 }, clock);
      await controller.submit('a');
      const queued = await controller.submit('a', { queueTimeoutMs: 1000 });
      expect(queued).toMatchObject({ status: 'queued', deadline: clock.monotonicNow() + 1000 });
      const full = await rejected<AdmissionError>(controller.submit('a', { deadline: 0 }));
      expect(full).toMatchObject({ code: 'admission_queue_full', details: { max_queue: 1 } });
      expect(await rowCounts(h())).toEqual({ permits: 1, queue: 1 });
      expect(outcomes()).toEqual(['granted', 'queued', 'queue_full']);
    });

    it('rejects a past deadline only when it would queue; with capacity it grants', async () => {
      const clock = new ManualClock();
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue' }, clock);
      granted(await controller.submit('a', { deadline: 0 }));
      const expired = await rejected<AdmissionError>(controller.submit('a', { deadline: clock.monotonicNow() }));
      expect(expired.code).toBe('queue_deadline_exceeded');
      expect(outcomes()).toEqual(['granted', 'expired']);
      expect(await rowCounts(h())).toEqual({ permits: 1, queue: 0 });
    });

    it('throws deployment_draining before validation, invalid_admission_options without telemetry', async () => {
      const { controller, events } = await node({});
      for (const bad of ['', 'x'.repeat(257), '\ud800', 42, null]) {
        expect(await rejected<AdmissionError>(controller.submit(bad as string))).toMatchObject({ code: 'invalid_admission_options', details: { field: 'agentId' } });
      }
      expect(await rejected<AdmissionError>(controller.acquire('a', { overflow: 'maybe' as 'queue' }))).toMatchObject({ details: { field: 'overflow' } });
      expect(await rejected<AdmissionError>(controller.acquire('a', { queueTimeoutMs: -1, deadline: 5 }))).toMatchObject({ details: { field: 'queueTimeoutMs' } });
      expect(await rejected<AdmissionError>(controller.acquire('a', [] as never))).toMatchObject({ details: { field: 'opts' } });
      expect(await rejected<AdmissionError>(controller.acquire('a', { owner: {} as AbortSignal }))).toMatchObject({ details: { field: 'owner' } });
      expect(events).toEqual([]);
      controller.beginDrain();
      expect(await rejected<AdmissionError>(controller.submit(42 as unknown as string))).toMatchObject({ code: 'deployment_draining' });
      expect(await rowCounts(h())).toEqual({ permits: 0, queue: 0 });
    });

    it('an already aborted signal or owner is refused before the database (telemetry per §4)', async () => {
      const { controller, outcomes } = await node({});
      const signal = AbortSignal.abort('gone');
      expect(await rejected(controller.acquire('a', { signal }))).toBe('gone');
      expect(await rejected<AdmissionError>(controller.acquire('a', { owner: AbortSignal.abort() }))).toMatchObject({ code: 'owner_down' });
      expect(outcomes()).toEqual(['requester_down', 'owner_down']);
      expect(await rowCounts(h())).toEqual({ permits: 0, queue: 0 });
    });

    it('typed errors for cancel, release, await, drain and construction; content-free', async () => {
      const { controller, instance } = await node({});
      expect(thrown<AdmissionError>(() => controller.cancel(5 as unknown as string)).code).toBe('invalid_request_ref');
      expect(thrown<AdmissionError>(() => controller.release({} as Permit)).code).toBe('invalid_permit');
      expect(controller.release({ id: 'permit-x' } as Permit)).toBe(false);
      expect(await rejected<AdmissionError>(controller.await(5 as unknown as string))).toMatchObject({ code: 'invalid_await' });
      expect(await rejected<AdmissionError>(controller.await('request-nope'))).toMatchObject({ code: 'not_found' });
      expect(await rejected<AdmissionError>(controller.drain(-1))).toMatchObject({ code: 'invalid_drain_timeout' });
      expect(thrown<AdmissionError>(() => controller.deadlineAfter(-1))).toMatchObject({ code: 'invalid_admission_options' });
      expect(thrown<AdmissionError>(() => new ClusterAdmissionController({ globalLimit: 0 }, { instance }))).toMatchObject({
        code: 'invalid_admission_control_config',
        details: { field: 'globalLimit' },
      });
      expect(thrown(() => new ClusterAdmissionController({}, { instance, reapIntervalMs: 0 }))).toMatchObject({
        code: 'invalid_cluster_options',
        details: { field: 'reapIntervalMs' },
      });
      // the instance brings its DataSource: a second one is an unknown key, not a second source of truth
      expect(thrown(() => new ClusterAdmissionController({}, { instance, dataSource: instance.dataSource } as never))).toMatchObject({ code: 'invalid_cluster_options', details: { field: 'dataSource' } });
      expect(thrown(() => new ClusterAdmissionController({}, { instance, other: 1 } as never))).toMatchObject({ details: { field: 'other' } });
    });
  });

  describe('§5.2 dispatch', () => {
    it('grants in FIFO order per agent after each release', async () => {
      const { controller } = await node({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 'infinity' });
      let held = granted(await controller.submit('a'));
      // submits decided one after the other: enqueue order is their order
      const refs: string[] = [];
      for (let n = 0; n < 3; n++) refs.push((await controller.submit('a')).requestRef);
      const order: string[] = [];
      for (let n = 0; n < 3; n++) {
        controller.release(held);
        held = await Promise.race(refs.slice(n).map((ref) => controller.await(ref)));
        order.push(held.requestRef);
      }
      expect(order).toEqual(refs);
      controller.release(held);
      await eventually(async () => (await rowCounts(h())).permits === 0);
    });

    it('an agent at its own limit does not block an older-queued other agent (no head-of-line blocking)', async () => {
      const { controller } = await node({ globalLimit: 2, defaultAgentLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 'infinity' });
      granted(await controller.submit('a'));
      const b1 = granted(await controller.submit('b'));
      const a2 = await controller.submit('a');
      const b2 = await controller.submit('b');
      expect([a2.status, b2.status]).toEqual(['queued', 'queued']);
      controller.release(b1);
      const permit = await controller.await(b2.requestRef, 5000);
      expect(permit.agentId).toBe('b');
      expect(controller.status().instance).toEqual({ active: 2, queued: 1 });
    });
  });

  describe('§5.3 deadlines', () => {
    it('the local timer fails the waiter with queue_deadline_exceeded and deletes the row', async () => {
      const clock = new ManualClock();
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue' }, clock);
      granted(await controller.submit('a'));
      const waiting = controller.acquire('a', { queueTimeoutMs: 500 });
      await eventually(async () => (await rowCounts(h())).queue === 1);
      const [row] = await h().sql<{ has_deadline: boolean }>('SELECT deadline_at IS NOT NULL AS has_deadline FROM agent_runtime_admission_queue');
      expect(row.has_deadline).toBe(true);
      clock.advance(499);
      await tick();
      expect(controller.status().instance.queued).toBe(1);
      clock.advance(1);
      expect(await rejected<AdmissionError>(waiting)).toMatchObject({ code: 'queue_deadline_exceeded' });
      expect(outcomes()).toEqual(['granted', 'queued', 'expired']);
      await eventually(async () => (await rowCounts(h())).queue === 0);
    });
  });

  describe('§5.6 cancel and release', () => {
    it('cancel of a queued request: waiters get cancelled, true once, the row goes', async () => {
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const queued = await controller.submit('a');
      const waiter = controller.await(queued.requestRef);
      expect(controller.cancel(queued.requestRef)).toBe(true);
      expect(controller.cancel(queued.requestRef)).toBe(false);
      expect(await rejected<AdmissionError>(waiter)).toMatchObject({ code: 'cancelled' });
      expect(await rejected<AdmissionError>(controller.await(queued.requestRef))).toMatchObject({ code: 'cancelled' });
      expect(outcomes()).toEqual(['granted', 'queued', 'cancelled']);
      await eventually(async () => (await rowCounts(h())).queue === 0);
    });

    it('cancel of an active request revokes it; release works once; the permit signal aborts once', async () => {
      const { controller, outcomes } = await node({ globalLimit: 2 });
      const one = await controller.submit('a');
      const two = granted(await controller.submit('a'));
      const aborts: unknown[] = [];
      granted(one).signal.addEventListener('abort', () => aborts.push(granted(one).signal.reason));
      expect(controller.cancel(one.requestRef)).toBe(true);
      expect(controller.cancel(one.requestRef)).toBe(false);
      expect(controller.release(granted(one))).toBe(false);
      expect(aborts).toHaveLength(1);
      expect(aborts[0]).toMatchObject({ code: 'permit_revoked', details: { outcome: 'cancelled' } });
      expect(controller.release({ ...two } as Permit)).toBe(false);
      expect(controller.release(two)).toBe(true);
      expect(controller.release(two)).toBe(false);
      expect(two.signal.reason).toMatchObject({ details: { outcome: 'released' } });
      expect(outcomes()).toEqual(['granted', 'granted', 'cancelled', 'released']);
      expect(controller.status().instance).toEqual({ active: 0, queued: 0 });
      await eventually(async () => (await rowCounts(h())).permits === 0);
    });

    it('a release is followed at once by a grant of the next request', async () => {
      const { controller } = await node({ globalLimit: 1, overflow: 'reject' });
      const first = granted(await controller.submit('a'));
      controller.release(first);
      granted(await controller.submit('a'));
    });
  });

  describe('§4 owner and requester', () => {
    it('owner abort while queued fails the waiters with owner_down; while active it revokes', async () => {
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue' });
      const holder = new AbortController();
      const permit = await controller.acquire('a', { owner: holder.signal });
      const owner = new AbortController();
      const queued = controller.acquire('a', { owner: owner.signal });
      await eventually(() => controller.status().instance.queued === 1);
      owner.abort();
      expect(await rejected<AdmissionError>(queued)).toMatchObject({ code: 'owner_down' });
      holder.abort();
      expect(permit.signal.reason).toMatchObject({ details: { outcome: 'owner_down' } });
      expect(outcomes()).toEqual(['granted', 'queued', 'owner_down', 'owner_down']);
      await eventually(async () => {
        const counts = await rowCounts(h());
        return counts.permits === 0 && counts.queue === 0;
      });
    });

    it('requester abort while queued rejects with the signal reason (requester_down); after the grant it does nothing', async () => {
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue' });
      const requester = new AbortController();
      const permit = await controller.acquire('a', { signal: requester.signal });
      requester.abort('late');
      expect(permit.signal.aborted).toBe(false);
      const waiting = new AbortController();
      const queued = controller.acquire('a', { signal: waiting.signal });
      await eventually(() => controller.status().instance.queued === 1);
      waiting.abort('left');
      expect(await rejected(queued)).toBe('left');
      expect(outcomes()).toEqual(['granted', 'queued', 'requester_down']);
    });

    it('an abort while the submit decision runs is applied once the decision is known', async () => {
      const { controller } = await node({ globalLimit: 1, overflow: 'queue' });
      granted(await controller.submit('a'));
      const owner = new AbortController();
      const queued = controller.acquire('a', { owner: owner.signal });
      owner.abort();
      expect(await rejected<AdmissionError>(queued)).toMatchObject({ code: 'owner_down' });
      await eventually(async () => (await rowCounts(h())).queue === 0);
    });
  });

  describe('§5.7 run, §5.9 drain', () => {
    it('run releases on every path', async () => {
      const { controller } = await node({ globalLimit: 1 });
      expect(await controller.run('a', () => 7)).toBe(7);
      await expect(controller.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect(controller.status().instance.active).toBe(0);
      await eventually(async () => (await rowCounts(h())).permits === 0);
    });

    it('beginDrain fails the queue with deployment_draining; drain waits for the permits', async () => {
      const clock = new ManualClock();
      const { controller, outcomes } = await node({ globalLimit: 1, overflow: 'queue' }, clock);
      const permit = granted(await controller.submit('a'));
      const queued = controller.acquire('a');
      await eventually(() => controller.status().instance.queued === 1);
      const first = controller.beginDrain();
      expect(first.draining).toBe(true);
      expect(first.drain_started_at).toBe(clock.wallNow());
      expect(await rejected<AdmissionError>(queued)).toMatchObject({ code: 'deployment_draining' });
      expect(await rejected<AdmissionError>(controller.submit('a'))).toMatchObject({ code: 'deployment_draining' });
      const drained = controller.drain(1000);
      controller.release(permit);
      expect(await drained).toMatchObject({ draining: true, instance: { active: 0, queued: 0 } });
      expect(outcomes()).toEqual(['granted', 'queued', 'deployment_draining', 'released']);
      await eventually(async () => {
        const counts = await rowCounts(h());
        return counts.permits === 0 && counts.queue === 0;
      });
      const timeout = controller.drain(0);
      await expect(timeout).resolves.toMatchObject({ draining: true });
    });

    it('drain rejects with drain_timeout and revokes nothing', async () => {
      const clock = new ManualClock();
      const { controller } = await node({}, clock);
      const permit = granted(await controller.submit('a'));
      const drained = controller.drain(100);
      clock.advance(100);
      expect(await rejected<AdmissionError>(drained)).toMatchObject({ code: 'drain_timeout', details: { active: 1 } });
      expect(permit.signal.aborted).toBe(false);
    });
  });
});
