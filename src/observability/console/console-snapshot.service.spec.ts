import { AdmissionController } from '../../admission/admission-controller';
import { InMemoryRunStore } from '../../runner/runs/stores/in-memory-run-store';
import { RunRegistry } from '../../runner/runs/run-registry';
import type { SessionEvent } from '../../runner/session.types';
import { RegistryRunnerDouble } from '../../runner/runs/testing/registry-runner-double';
import { rejected } from '../../shared/testing/rejected';
import type { Principal } from '../../http/principal';
import { resolveRunsModuleOptions } from '../../runner/runs/runs-module-options';
import { resolveConsoleOptions } from './console-options';
import { ConsoleSnapshotService } from './console-snapshot.service';
import { PendingConfirmations } from './pending-confirmations';

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A stored `confirmation_requested` event as the Runner writes it: call id, tool, arguments and hint. */
function confirmationRequested(callId: string, tool: string): SessionEvent {
  return Object.freeze({
    event_id: `evt-${callId}`,
    invocation_id: 'inv-1',
    session_id: 'ses-1',
    seq: 1,
    author: 'runner',
    kind: 'confirmation_requested',
    content: Object.freeze({ call_id: callId, tool, args: { service: 'secret-service-name' }, hint: 'Deploys to production.' }),
    created_at_ms: 1,
  }) as SessionEvent;
}

describe('RunRegistry.list (what the console lists)', () => {
  test('the runs this registry started, newest first, at most limit, without the ones the store dropped', async () => {
    const store = new InMemoryRunStore();
    const registry = new RunRegistry({ runners: [new RegistryRunnerDouble()], store });
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) ids.push((await registry.start({ agent: 'assistant', userId: 'u-1', message: 'hi' })).run_id);
    expect((await registry.list()).map((run) => run.run_id)).toEqual([...ids].reverse());
    expect((await registry.list(2)).map((run) => run.run_id)).toEqual([ids[2], ids[1]]);
    expect((await registry.list())[0]).toEqual(await registry.owned(ids[2]));
    await store.delete(ids[1]);
    expect((await registry.list()).map((run) => run.run_id)).toEqual([ids[2], ids[0]]);
    await registry.shutdown();
  });

  test.each([0, 1025, 1.5, Number.NaN])('limit %p: invalid_run_request (limit)', async (limit) => {
    const registry = new RunRegistry({ runners: [new RegistryRunnerDouble()] });
    expect(await rejected(registry.list(limit))).toMatchObject({ code: 'invalid_run_request', details: { field: 'limit' } });
  });
});

describe('PendingConfirmations', () => {
  test("a paused run's pending calls with their tool names, never the arguments or the hint", async () => {
    const store = new InMemoryRunStore();
    const runner = new RegistryRunnerDouble();
    const registry = new RunRegistry({ runners: [runner], store });
    const { run_id: runId } = await registry.start({ agent: 'assistant', userId: 'u-1', message: 'deploy' });
    await flush();
    runner.invocations[0].admit('inv-1');
    await flush();
    await store.append(runId, { type: 'event', event: confirmationRequested('deploy-1', 'deploy') }, { keepItems: 100 });
    runner.invocations[0].pause(['deploy-1', 'lost-1']);
    await flush();
    await flush();
    const run = await registry.get(runId);
    expect(run.status).toBe('paused');

    const confirmations = await new PendingConfirmations(store).of([run]);
    expect(confirmations).toEqual([
      { run_id: runId, call_id: 'deploy-1', tool: 'deploy' },
      { run_id: runId, call_id: 'lost-1', tool: null },
    ]);
    expect(JSON.stringify(confirmations)).not.toMatch(/secret-service-name|Deploys to production/);
    await registry.shutdown();
  });

  test('runs that are not paused have no pending confirmations; without a store the tool is unknown', async () => {
    const paused = { run_id: 'run-a', status: 'paused', pending_call_ids: ['c-1'], last_seq: 3 } as never;
    const running = { run_id: 'run-b', status: 'running', pending_call_ids: [], last_seq: 3 } as never;
    expect(await new PendingConfirmations(null).of([paused, running])).toEqual([{ run_id: 'run-a', call_id: 'c-1', tool: null }]);
  });
});

describe('ConsoleSnapshotService', () => {
  test('admission per agent (sorted), runs without session or invocation ids, and no audit log', async () => {
    const admission = new AdmissionController({ globalLimit: 3, defaultAgentLimit: 1, overflow: 'queue', maxQueue: 4, defaultQueueTimeoutMs: 'infinity' });
    const held = [admission.submit('zeta'), admission.submit('alpha'), admission.submit('alpha')];
    const store = new InMemoryRunStore();
    const registry = new RunRegistry({ runners: [new RegistryRunnerDouble()], store });
    const { run_id: runId } = await registry.start({ agent: 'assistant', userId: 'u-1', message: 'hi' });
    const service = new ConsoleSnapshotService(resolveConsoleOptions({ path: '/console', allowUnauthenticated: true }), admission, registry, store, null, null);

    const snapshot = await service.snapshot();
    expect(snapshot.admission).toMatchObject({ global_limit: 3, active: 2, queue_length: 1 });
    expect(snapshot.admission?.per_agent).toEqual([
      { agent: 'alpha', active: 1, queued: 1, limit: 1 },
      { agent: 'zeta', active: 1, queued: 0, limit: 1 },
    ]);
    expect(snapshot.runs).toEqual([
      { run_id: runId, agent: 'assistant', status: 'pending', pending_call_ids: [], created_at_ms: expect.any(Number), updated_at_ms: expect.any(Number), last_seq: 0, error_code: null },
    ]);
    expect(snapshot.confirmations).toEqual([]);
    expect(snapshot.denials).toEqual({ status: 'no_postgres_audit_log' });
    expect(held.map((result) => result.status)).toEqual(['granted', 'granted', 'queued']);
    admission.beginDrain();
    await registry.shutdown();
  });

  test('flow control: tenants as a list, most work first, other tenants folded, cost in use and effective limits (spec 09 §7)', async () => {
    const admission = new AdmissionController({
      overflow: 'queue',
      defaultQueueTimeoutMs: 'infinity',
      agentLimits: { chat: 8 },
      defaultTenantLimit: 1,
      globalCostLimit: 1000,
      adaptive: { chat: { min: 2 } },
    });
    for (let i = 0; i < 25; i++) admission.submit('bulk', { tenant: `t-${String(i).padStart(2, '0')}` });
    admission.submit('chat', { tenant: 'busy', cost: 5 });
    admission.submit('chat', { tenant: 'busy', cost: 5 });
    const service = new ConsoleSnapshotService(resolveConsoleOptions({ path: '/console', allowUnauthenticated: true }), admission, null, null, null, null);

    const snapshot = await service.snapshot();
    expect(snapshot.admission?.cost_in_use).toBe(30);
    expect(snapshot.admission?.per_agent).toEqual([
      { agent: 'bulk', active: 25, queued: 0, limit: 64, cost_in_use: 25 },
      { agent: 'chat', active: 1, queued: 1, limit: 8, effective_limit: 8, cost_in_use: 5 },
    ]);
    const tenants = snapshot.admission?.per_tenant ?? [];
    expect(tenants).toHaveLength(20);
    expect(tenants[0]).toEqual({ tenant: 'busy', active: 1, queued: 1, limit: 1, cost_in_use: 5 });
    expect(tenants.slice(1).every((tenant) => tenant.active + tenant.queued === 1)).toBe(true);
    expect(snapshot.admission?.other_tenants).toEqual({ count: 6, active: 6, queued: 0 });
    admission.beginDrain();
  });

  test('tenant ids only for a viewer mayViewTenants allows; others see every tenant folded into other_tenants', async () => {
    const admission = new AdmissionController({ overflow: 'queue', defaultQueueTimeoutMs: 'infinity', defaultTenantLimit: 1 });
    admission.submit('chat', { tenant: 'acme' });
    admission.submit('chat', { tenant: 'acme' });
    admission.submit('chat', { tenant: 'globex' });
    const options = resolveConsoleOptions({ path: '/console', resolvePrincipal: () => null, mayViewTenants: (principal) => principal.id === 'operator' });
    const service = new ConsoleSnapshotService(options, admission, null, null, null, null);

    const forAlice = await service.snapshot({ id: 'alice' });
    expect(forAlice.admission?.per_tenant).toEqual([]);
    expect(forAlice.admission?.other_tenants).toEqual({ count: 2, active: 2, queued: 1 });
    expect(JSON.stringify(forAlice)).not.toMatch(/acme|globex/);
    const forOperator = await service.snapshot({ id: 'operator' });
    expect(forOperator.admission?.per_tenant?.map((tenant) => tenant.tenant)).toEqual(['acme', 'globex']);
    expect(forOperator.admission?.other_tenants).toEqual({ count: 0, active: 0, queued: 0 });
    // a rule that throws shows nothing
    const throwing = resolveConsoleOptions({ path: '/console', resolvePrincipal: () => null, mayViewTenants: () => { throw new Error('rule'); } });
    expect((await new ConsoleSnapshotService(throwing, admission, null, null, null, null).snapshot({ id: 'operator' })).admission?.per_tenant).toEqual([]);
    admission.beginDrain();
  });

  test('without flow options the admission snapshot has no tenant keys', async () => {
    const admission = new AdmissionController();
    admission.submit('chat');
    const snapshot = await new ConsoleSnapshotService(resolveConsoleOptions({ path: '/console', allowUnauthenticated: true }), admission, null, null, null, null).snapshot();
    expect(snapshot.admission).not.toHaveProperty('per_tenant');
    expect(snapshot.admission).not.toHaveProperty('other_tenants');
    expect(snapshot.admission).not.toHaveProperty('cost_in_use');
  });

  test("a viewer sees only the runs and confirmations RunsModule's rule allows, and denials only with mayViewDenials", async () => {
    const store = new InMemoryRunStore();
    const runner = new RegistryRunnerDouble();
    const registry = new RunRegistry({ runners: [runner], store });
    const alices = await registry.start({ agent: 'assistant', userId: 'alice', owner: 'alice', message: 'deploy' });
    const bobs = await registry.start({ agent: 'assistant', userId: 'bob', owner: 'bob', message: 'hi' });
    await flush();
    runner.invocations[0].admit('inv-1');
    await flush();
    runner.invocations[0].pause(['deploy-1']);
    await flush();
    await flush();
    const runsOptions = resolveRunsModuleOptions({ runners: [runner], authorizeRun: (principal: Principal, action: string) => principal.roles?.includes('approver') === true && action !== 'cancel' });
    const options = resolveConsoleOptions({ path: '/console', resolvePrincipal: () => null, mayViewDenials: (principal) => principal.id === 'operator' });
    const service = new ConsoleSnapshotService(options, null, registry, store, null, runsOptions);

    const forBob = await service.snapshot({ id: 'bob' });
    expect(forBob.runs?.map((run) => run.run_id)).toEqual([bobs.run_id]);
    expect(forBob.confirmations).toEqual([]);
    expect(forBob.denials).toEqual({ status: 'not_shown' });
    const forAlice = await service.snapshot({ id: 'alice' });
    expect(forAlice.runs?.map((run) => run.run_id)).toEqual([alices.run_id]);
    expect(forAlice.confirmations).toEqual([{ run_id: alices.run_id, call_id: 'deploy-1', tool: null }]);
    const forOperator = await service.snapshot({ id: 'operator', roles: ['approver'] });
    expect(forOperator.runs?.map((run) => run.run_id)).toEqual([bobs.run_id, alices.run_id]);
    expect(forOperator.confirmations?.map((call) => call.run_id)).toEqual([alices.run_id]);
    expect(forOperator.denials).toEqual({ status: 'no_postgres_audit_log' });
    await registry.shutdown();
  });
});
