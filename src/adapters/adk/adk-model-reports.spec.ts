import { AdmissionController } from '../../admission/admission-controller';
import type { AdmissionRequestOptions } from '../../admission/admission-request';
import type { PermitSource } from '../../admission/admission-service';
import type { Permit, WorkReport } from '../../admission/permit';
import { drain, makeFacade, message, ROOT, scriptedAgent, text, USER } from './testing/adk-harness';

/** A real controller seen through a source that records each acquire's options and each report. */
function recordingSource() {
  const controller = new AdmissionController({ agentLimits: { [ROOT]: 4 }, adaptive: { [ROOT]: { min: 1, decreaseIntervalMs: 0 } } });
  const requests: AdmissionRequestOptions[] = [];
  const reports: WorkReport[] = [];
  const issued = new Map<Permit, Permit>();
  const source: PermitSource = {
    acquire: async (agentId, opts) => {
      requests.push({ tenant: opts?.tenant, cost: opts?.cost, priority: opts?.priority });
      const permit = await controller.acquire(agentId, opts);
      const seen = { id: permit.id, agentId, requestRef: permit.requestRef, signal: permit.signal, settle: (c: number) => permit.settle(c), report: (r: WorkReport) => (reports.push(r), permit.report(r)) } as Permit;
      issued.set(seen, permit);
      return seen;
    },
    release: (permit) => controller.release(issued.get(permit) ?? permit),
  };
  return { controller, source, requests, reports };
}

const OPEN = { agents: { allow: 'all' as const }, tools: { allow: 'all' as const } };

describe('AdkRunnerFacade: flow options and model outcome reports (spec 09 §1, §6)', () => {
  it('passes tenant, cost and priority (fixed or resolved from the run) to acquire', async () => {
    const { source, requests } = recordingSource();
    const { agent } = scriptedAgent(ROOT, [text('hello')]);
    const facade = makeFacade({ agent, admission: { controller: source, tenant: (run) => `t-${run.userId}`, cost: 40, priority: 'low' }, runtimePolicy: OPEN });
    const { error } = await drain(facade.runAsync({ userId: USER, sessionId: 's-flow', newMessage: message('hi') }));
    expect(error).toBeUndefined();
    expect(requests).toEqual([{ tenant: `t-${USER}`, cost: 40, priority: 'low' }]);
  });

  it('a model call that answers reports ok once, at the end of the run', async () => {
    const { source, reports, controller } = recordingSource();
    const { agent } = scriptedAgent(ROOT, [text('hello')]);
    const facade = makeFacade({ agent, admission: { controller: source }, runtimePolicy: OPEN });
    await drain(facade.runAsync({ userId: USER, sessionId: 's-ok', newMessage: message('hi') }));
    expect(reports).toEqual([{ outcome: 'ok', latencyMs: expect.any(Number) }]);
    expect(controller.status().active).toBe(0);
  });

  it.each([429, 503])('a model call failing with status %i reports overloaded and lowers the effective limit', async (status) => {
    const { source, reports, controller } = recordingSource();
    const { agent } = scriptedAgent(ROOT, [
      () => {
        throw Object.assign(new Error('provider busy'), { status });
      },
    ]);
    const facade = makeFacade({ agent, admission: { controller: source }, runtimePolicy: OPEN });
    const held = await controller.acquire(ROOT);
    await drain(facade.runAsync({ userId: USER, sessionId: `s-${status}`, newMessage: message('hi') }));
    expect(reports).toEqual([{ outcome: 'overloaded', latencyMs: expect.any(Number) }]);
    expect(controller.status().per_agent[ROOT]).toMatchObject({ active: 1, effective_limit: 3 });
    controller.release(held);
  });
});
