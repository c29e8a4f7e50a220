/**
 * Property of priority classes with aging (spec 09 §4), on both controllers: with one agent of limit
 * 1 (every queued flow can take the freed permit), each grant goes to the head of a flow whose
 * effective class is the highest among the heads of all queued flows at that instant. Since a head
 * reaches the top class after at most 2 × priorityAgingMs, no request waits in a class below the top
 * for longer than that bound, and a class below never goes before it: the starvation bound of the docs.
 */
import fc from 'fast-check';
import { effectiveRank, CLASS_RANK } from '../../src/admission/flow/fair-share';
import type { AdmissionService } from '../../src/admission/admission-service';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, admissionSuite, type AdmissionSuite } from '../support/admission-controller-fixture';

type Priority = 'low' | 'normal' | 'high';
const TENANTS = ['t1', 't2', 't3', undefined] as const;

type Command =
  | { kind: 'submit'; tenant: number; priority: Priority; cost: number }
  | { kind: 'release'; afterMs: number }
  | { kind: 'advance'; ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), tenant: fc.nat(3), priority: fc.constantFrom<Priority>('low', 'normal', 'high'), cost: fc.integer({ min: 1, max: 3 }) }) },
  // time passes before most releases, so queued heads of lower classes have aged when the permit frees
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), afterMs: fc.integer({ min: 0, max: 2500 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2500 }) }) },
);

interface Request {
  readonly index: number;
  readonly flow: string;
  readonly rank: number;
  readonly submittedAt: number;
  permit: Permit | undefined;
  released: boolean;
}

async function play(suite: AdmissionSuite, agingMs: number, commands: Command[]): Promise<void> {
  const clock = new ManualClock();
  const config = { defaultAgentLimit: 1, overflow: 'queue' as const, maxQueue: 200, defaultQueueTimeoutMs: 'infinity' as const, tenantWeights: { t1: 1, t2: 2, t3: 0.5 }, priorityAgingMs: agingMs };
  const { controller, settle, close } = await suite.setup(config, clock);
  try {
    const requests: Request[] = [];
    for (const command of commands) {
      if (command.kind === 'advance') clock.advance(command.ms);
      else if (command.kind === 'submit') await submit(controller, requests, command, clock);
      else {
        clock.advance(command.afterMs);
        await settle();
        await releaseAndCheck(controller, requests, settle, clock.monotonicNow(), agingMs);
      }
      await settle();
    }
    for (const request of requests) if (request.permit && !request.released) controller.release(request.permit);
  } finally {
    await close();
  }
}

async function submit(controller: AdmissionService, requests: Request[], command: Extract<Command, { kind: 'submit' }>, clock: ManualClock): Promise<void> {
  const tenant = TENANTS[command.tenant];
  const request: Request = { index: requests.length, flow: tenant ?? '-', rank: CLASS_RANK[command.priority], submittedAt: clock.monotonicNow(), permit: undefined, released: false };
  requests.push(request);
  const result = await controller.submit('a', { tenant, priority: command.priority, cost: command.cost });
  if (result.status === 'granted') request.permit = result.permit;
  // still queued at the end: the close refuses it (deployment_draining)
  else void controller.await(result.requestRef).then((permit) => void (request.permit = permit), () => undefined);
}

/** Releases the held permit and checks the one grant it makes against the queued flow heads of that instant. */
async function releaseAndCheck(controller: AdmissionService, requests: Request[], settle: () => Promise<void>, now: number, agingMs: number): Promise<void> {
  const held = requests.find((request) => request.permit && !request.released);
  if (held === undefined) return;
  const heads = new Map<string, Request>();
  for (const request of requests) if (!request.permit && !heads.has(request.flow)) heads.set(request.flow, request);
  const rankOf = (request: Request) => effectiveRank(request.rank, now - request.submittedAt, agingMs);
  const topRank = Math.max(-1, ...[...heads.values()].map(rankOf));
  controller.release(held.permit as Permit);
  held.released = true;
  await settle();
  const grantedNow = requests.filter((request) => request.permit && !request.released);
  if (heads.size === 0) return expect(grantedNow).toEqual([]);
  expect(grantedNow).toHaveLength(1);
  const [granted] = grantedNow;
  // FIFO within a flow, and no flow whose head is in a lower effective class goes before a higher one
  expect(heads.get(granted.flow)).toBe(granted);
  expect(rankOf(granted)).toBe(topRank);
}

/** Runs per variant; a cluster decision is a database transaction. */
const RUNS = { local: 300, cluster: Number(process.env.ADMISSION_CLUSTER_PROPERTY_RUNS ?? 15) };

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const suite = admissionSuite(variantName);
  const runs = suite.variant.synchronous ? RUNS.local : RUNS.cluster;
  it('priority aging (spec 09 §4): each grant goes to a flow head of the highest effective class, so nothing waits below the top class past 2 × priorityAgingMs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 100, max: 1500 }), fc.array(commandArb, { minLength: 10, maxLength: 80, size: 'max' }), (agingMs, commands) => play(suite, agingMs, commands)),
      { numRuns: runs, endOnFailure: !suite.variant.synchronous },
    );
  }, suite.variant.synchronous ? 60_000 : Math.max(120_000, runs * 8_000));
});
