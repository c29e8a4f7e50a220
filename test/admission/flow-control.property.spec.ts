/**
 * Property-based tests of flow control (spec 09 §11), with fast-check, on both controllers (the first
 * property; a cluster run is a database transaction per decision, so it plays fewer runs).
 *
 * A random configuration (tenants, cost limits, rates, an adaptive agent, priority aging) and a random
 * sequence of commands (acquire with tenant/cost/priority/overflow, release, cancel, settle, report,
 * clock advance) are played on a ManualClock. After every command and inside the telemetry sink it
 * checks: no scope over its permit or cost limit (an adaptive agent at most `L` at each grant);
 * FIFO within a flow; grants per 60 s window of a rated scope ≤ requestsPerMinute + burst; and at the
 * end, exactly-once release with cost in use back to 0. A second property checks the two-tenant
 * fair-share bound of §3.
 */
import fc from 'fast-check';
import { AdmissionController } from '../../src/admission/admission-controller';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionDecisionEvent } from '../../src/admission/admission.types';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import type { AdmissionService } from '../../src/admission/admission-service';
import { ADMISSION_VARIANTS, admissionSuite, type AdmissionSuite } from '../support/admission-controller-fixture';

const AGENTS = ['a', 'b'] as const;
const TENANTS = ['t1', 't2', 't3'] as const;

interface Limits {
  globalLimit: number;
  agentLimit: number;
  tenantLimit: number | undefined;
  globalCost: number | undefined;
  agentCost: number | undefined;
  tenantCost: number | undefined;
  rpm: { scope: 'global' | 'agent' | 'tenant'; rpm: number; burst: number } | undefined;
  costRate: { costPerMinute: number } | undefined;
  adaptive: { decreaseIntervalMs: number } | undefined;
  agingMs: number | 'infinity';
  maxQueue: number;
}

type Command =
  | { kind: 'acquire'; agent: number; tenant: number; cost: number; priority: 'low' | 'normal' | 'high'; overflow: 'queue' | 'reject' }
  | { kind: 'release' | 'cancel' | 'settle' | 'report'; index: number; value: number }
  | { kind: 'advance'; ms: number };

const limitsArb: fc.Arbitrary<Limits> = fc.record({
  globalLimit: fc.integer({ min: 1, max: 4 }),
  agentLimit: fc.integer({ min: 1, max: 3 }),
  tenantLimit: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
  globalCost: fc.option(fc.integer({ min: 3, max: 8 }), { nil: undefined }),
  agentCost: fc.option(fc.integer({ min: 3, max: 6 }), { nil: undefined }),
  tenantCost: fc.option(fc.integer({ min: 3, max: 5 }), { nil: undefined }),
  rpm: fc.option(fc.record({ scope: fc.constantFrom('global' as const, 'agent' as const, 'tenant' as const), rpm: fc.integer({ min: 1, max: 120 }), burst: fc.integer({ min: 1, max: 3 }) }), {
    nil: undefined,
  }),
  costRate: fc.option(fc.record({ costPerMinute: fc.integer({ min: 30, max: 600 }) }), { nil: undefined }),
  adaptive: fc.option(fc.record({ decreaseIntervalMs: fc.integer({ min: 0, max: 2000 }) }), { nil: undefined }),
  agingMs: fc.oneof(fc.integer({ min: 100, max: 3000 }), fc.constant('infinity' as const)),
  maxQueue: fc.integer({ min: 0, max: 12 }),
});

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('acquire' as const), agent: fc.nat(1), tenant: fc.oneof(fc.constant(0), fc.nat(3)), cost: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(0.5)), priority: fc.constantFrom('low' as const, 'normal' as const, 'high' as const), overflow: fc.constantFrom('queue' as const, 'reject' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), index: fc.nat(40), value: fc.constant(0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat(40), value: fc.constant(0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('settle' as const), index: fc.nat(40), value: fc.integer({ min: 0, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('report' as const), index: fc.nat(40), value: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 10_000, max: 40_000 })) }) },
);

function configOf(limits: Limits): AdmissionConfig {
  const rate = limits.rpm && { requestsPerMinute: limits.rpm.rpm, burst: limits.rpm.burst };
  const costRate = limits.costRate;
  return {
    globalLimit: limits.globalLimit,
    defaultAgentLimit: limits.agentLimit,
    maxQueue: limits.maxQueue,
    defaultQueueTimeoutMs: 20_000,
    // every tenant is named, so telemetry tells which tenant each decision concerns
    tenantWeights: { t1: 1, t2: 2, t3: 0.5 },
    ...(limits.tenantLimit !== undefined && { defaultTenantLimit: limits.tenantLimit }),
    ...(limits.globalCost !== undefined && { globalCostLimit: limits.globalCost }),
    ...(limits.agentCost !== undefined && { defaultAgentCostLimit: limits.agentCost }),
    ...(limits.tenantCost !== undefined && { defaultTenantCostLimit: limits.tenantCost }),
    rates: {
      ...(rate && limits.rpm?.scope === 'global' && { global: rate }),
      ...(rate && limits.rpm?.scope === 'agent' && { defaultAgent: rate }),
      ...(rate && limits.rpm?.scope === 'tenant' && { defaultTenant: rate }),
      ...(costRate && { agents: { b: costRate } }),
    },
    ...(limits.adaptive && { adaptive: { a: { min: 1, backoffRatio: 0.5, decreaseIntervalMs: limits.adaptive.decreaseIntervalMs } } }),
    priorityAgingMs: limits.agingMs,
  };
}

interface Request {
  readonly index: number;
  readonly flow: string;
  readonly cost: number;
  ref: string | undefined;
  permit: Permit | undefined;
  released: boolean;
  aborts: number;
}

async function play(suite: AdmissionSuite, limits: Limits, commands: Command[]): Promise<void> {
  const clock = new ManualClock();
  const grants: Array<{ at: number; agent: string; tenant: string | undefined }> = [];
  let controller!: AdmissionService;
  const check = () => {
    const status = controller.status();
    expect(status.active).toBeLessThanOrEqual(limits.globalLimit);
    if (limits.globalCost !== undefined) expect(status.cost_in_use).toBeLessThanOrEqual(limits.globalCost + 1e-9);
    for (const agent of Object.values(status.per_agent)) {
      expect(agent.active).toBeLessThanOrEqual(limits.agentLimit);
      if (limits.agentCost !== undefined) expect(agent.cost_in_use).toBeLessThanOrEqual(limits.agentCost + 1e-9);
    }
    for (const tenant of Object.values(status.per_tenant ?? {})) {
      if (limits.tenantLimit !== undefined) expect(tenant.active).toBeLessThanOrEqual(limits.tenantLimit);
      if (limits.tenantCost !== undefined) expect(tenant.cost_in_use).toBeLessThanOrEqual(limits.tenantCost + 1e-9);
    }
    return status;
  };
  const onEvent = (payload: AdmissionDecisionEvent) => {
    const status = check();
    if (payload.outcome !== 'granted') return;
    grants.push({ at: clock.monotonicNow(), agent: payload.agent_id, tenant: payload.tenant_id });
    const agent = status.per_agent[payload.agent_id];
    if (agent?.effective_limit !== undefined) expect(agent.active).toBeLessThanOrEqual(agent.effective_limit);
  };
  // the controller delivers telemetry through a sink that swallows a throwing listener: keep what failed
  const failedInListener: unknown[] = [];
  const emit = (_name: string, payload: object) => {
    try {
      onEvent(payload as AdmissionDecisionEvent);
    } catch (error) {
      failedInListener.push(error);
    }
  };
  const fixture = await suite.setup(configOf(limits), clock, { emit });
  controller = fixture.controller;
  try {
    await playOn(fixture.settle, limits, commands);
    if (failedInListener.length > 0) throw failedInListener[0];
  } finally {
    await fixture.close();
  }

  async function playOn(settle: () => Promise<void>, limits: Limits, commands: Command[]): Promise<void> {

    const requests: Request[] = [];
    const grantOrder: Request[] = [];
    for (const command of commands) {
      const pick = (index: number) => (requests.length === 0 ? undefined : requests[index % requests.length]);
      if (command.kind === 'acquire') {
        const agent = AGENTS[command.agent];
        const tenant = command.tenant < 3 ? TENANTS[command.tenant] : undefined;
        const request: Request = { index: requests.length, flow: `${agent}/${tenant ?? '-'}`, cost: command.cost, ref: undefined, permit: undefined, released: false, aborts: 0 };
        requests.push(request);
        try {
          const result = await controller.submit(agent, { tenant, cost: command.cost, priority: command.priority, overflow: command.overflow });
          request.ref = result.requestRef;
          if (result.status === 'granted') {
            request.permit = result.permit;
            grantOrder.push(request);
          } else {
            controller.await(result.requestRef).then(
              (permit) => {
                request.permit = permit;
                grantOrder.push(request);
              },
              () => undefined,
            );
          }
        } catch (error) {
          expect(['concurrency_limit_reached', 'rate_limited', 'admission_queue_full']).toContain((error as { code: string }).code);
        }
      } else if (command.kind === 'advance') {
        clock.advance(command.ms);
      } else {
        const request = pick(command.index);
        if (request?.permit) {
          const permit = request.permit;
          if (command.kind === 'release' && !request.released) {
            permit.signal.addEventListener('abort', () => request.aborts++);
            expect(controller.release(permit)).toBe(true);
            expect(controller.release(permit)).toBe(false);
            request.released = true;
          } else if (command.kind === 'settle') {
            try {
              permit.settle(command.value);
            } catch (error) {
              expect((error as { code: string }).code).toBe('invalid_settle');
            }
          } else if (command.kind === 'report') {
            try {
              permit.report({ outcome: command.value === 0 ? 'ok' : 'overloaded' });
            } catch (error) {
              expect((error as { code: string }).code).toBe('invalid_report');
            }
          }
        } else if (request?.ref && command.kind === 'cancel') {
          controller.cancel(request.ref);
        }
      }
      await settle();
      check();
    }

    // FIFO within a flow: grants of one flow follow submit order
    const lastByFlow = new Map<string, number>();
    for (const request of grantOrder) {
      expect(request.index).toBeGreaterThan(lastByFlow.get(request.flow) ?? -1);
      lastByFlow.set(request.flow, request.index);
    }

    // rates: grants per 60 s window of a rated scope ≤ requestsPerMinute + burst
    if (limits.rpm) {
      const { scope, rpm, burst } = limits.rpm;
      // `rates.agents.b` (the cost rate) replaces `rates.defaultAgent` for b, as an `agentLimits` entry replaces the default
      const ratedAgent = (agent: string) => !(agent === 'b' && limits.costRate);
      const keyOf = (grant: (typeof grants)[number]) => (scope === 'global' ? 'g' : scope === 'agent' ? (ratedAgent(grant.agent) ? grant.agent : undefined) : grant.tenant);
      const byKey = new Map<string, number[]>();
      for (const grant of grants) {
        const key = keyOf(grant);
        if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), grant.at]);
      }
      for (const times of byKey.values()) {
        for (let i = 0; i < times.length; i++) {
          const inWindow = times.filter((t) => t >= times[i] && t < times[i] + 60_000).length;
          expect(inWindow).toBeLessThanOrEqual(rpm + burst);
        }
      }
    }

    // exactly-once release; cost in use back to 0
    // one at a time: a cancel may grant the next request of a flow, whose permit the caller sees a turn later
    for (const request of requests) {
      if (request.ref && !request.permit) {
        controller.cancel(request.ref);
        await settle();
      }
    }
    for (const request of requests) {
      if (request.permit && !request.released) {
        request.permit.signal.addEventListener('abort', () => request.aborts++);
        expect(controller.release(request.permit)).toBe(true);
        request.released = true;
      }
    }
    await settle();
    for (const request of requests) if (request.permit) expect(request.aborts).toBe(1);
    const status = controller.status();
    expect(status).toMatchObject({ active: 0, queue_length: 0, per_agent: {}, per_tenant: {} });
    if (status.cost_in_use !== undefined) expect(status.cost_in_use).toBe(0);
  }
}

/** Runs of the first property per variant; the cluster's every decision is a transaction. */
const RUNS = { local: 300, cluster: Number(process.env.ADMISSION_CLUSTER_PROPERTY_RUNS ?? 20) };

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const suite = admissionSuite(variantName);
  const runs = suite.variant.synchronous ? RUNS.local : RUNS.cluster;
  it('flow control properties (spec 09 §11): no scope over its limits, FIFO within a flow, rates per window, exactly-once release', async () => {
    await fc.assert(
      fc.asyncProperty(limitsArb, fc.array(commandArb, { minLength: 1, maxLength: 60, size: 'medium' }), (limits, commands) => play(suite, limits, commands)),
      // a cluster counterexample is reported unshrunk: each run is seconds of transactions
      { numRuns: runs, endOnFailure: !suite.variant.synchronous },
    );
  }, suite.variant.synchronous ? 60_000 : Math.max(120_000, runs * 8_000));
});

describe('flow control properties (spec 09 §11), local controller', () => {
  it('two continuously backlogged tenants: normalised service differs by at most max_cost/w1 + max_cost/w2 over any interval', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.25, max: 4, noNaN: true }),
        fc.double({ min: 0.25, max: 4, noNaN: true }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 20, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 20, maxLength: 20 }),
        (w1, w2, costs1, costs2) => {
          const controller = new AdmissionController({ defaultAgentLimit: 1, overflow: 'queue', maxQueue: 100, defaultQueueTimeoutMs: 'infinity', tenantWeights: { t1: w1, t2: w2 } }, { clock: new ManualClock() });
          const served: Array<{ tenant: 1 | 2; cost: number }> = [];
          let held = (controller.submit('a', { tenant: 'hold' }) as { permit: Permit }).permit;
          const refs = new Map<string, { tenant: 1 | 2; cost: number }>();
          costs1.forEach((cost) => refs.set(controller.submit('a', { tenant: 't1', cost }).requestRef, { tenant: 1, cost }));
          costs2.forEach((cost) => refs.set(controller.submit('a', { tenant: 't2', cost }).requestRef, { tenant: 2, cost }));
          const left = { 1: costs1.length, 2: costs2.length };
          while (left[1] > 0 && left[2] > 0) {
            controller.release(held);
            const next = [...refs.entries()].find(([ref]) => controller.status().active === 1 && isActive(controller, ref));
            if (next === undefined) throw new Error('nothing granted');
            refs.delete(next[0]);
            served.push(next[1]);
            left[next[1].tenant]--;
            held = permitOf(controller, next[0]);
          }
          const bound = 5 / w1 + 5 / w2 + 1e-9;
          for (let i = 0; i < served.length; i++) {
            let s1 = 0;
            let s2 = 0;
            for (let j = i; j < served.length; j++) {
              if (served[j].tenant === 1) s1 += served[j].cost;
              else s2 += served[j].cost;
              expect(Math.abs(s1 / w1 - s2 / w2)).toBeLessThanOrEqual(bound);
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

/** The permit of an active request of this (local) controller, read through `await`'s synchronous path. */
function isActive(controller: AdmissionController, ref: string): boolean {
  const entry = (controller as unknown as { requests: Map<string, { state: string }> }).requests.get(ref);
  return entry?.state === 'active';
}

function permitOf(controller: AdmissionController, ref: string): Permit {
  return (controller as unknown as { requests: Map<string, { permit: Permit }> }).requests.get(ref)?.permit as Permit;
}
