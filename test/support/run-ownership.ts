/**
 * The run ownership cases (issue 22), shared by the in-memory, the Postgres and the two-instance
 * suites: a bearer token per principal, an approver hook, an agent that pauses on a confirmation,
 * and the cases themselves over real sockets (`owner` starts the run; `other` is the same instance
 * or another one on the same store).
 */
import { hasRole, type Principal } from '../../src/http/principal';
import type { Agent, Tool } from '../../src/runner/agent.types';
import type { AuthorizeRun } from '../../src/runner/runs/run-access';
import { ScriptedModel } from '../../src/runner/models/scripted-model';
import { HttpClient } from '../e2e/support/http-client';
import { SseConnection } from '../e2e/support/sse-client';
import { eventually } from './eventually';

export const OWNERSHIP_AGENT = 'deployer';

const TOKENS: Readonly<Record<string, Principal>> = {
  'alice-token': { id: 'alice' },
  'bob-token': { id: 'bob' },
  'operator-token': { id: 'operator', roles: ['approver'] },
};

/** The principal of `Authorization: Bearer <token>`; `null` without a known token. */
export function bearerPrincipal(request: unknown): Principal | null {
  const header = (request as { headers?: Record<string, unknown> }).headers?.authorization;
  const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
  return TOKENS[token] ?? null;
}

/** An approver may read, follow and confirm any run; nobody else gets anything beyond their own runs. */
export const approverMayConfirm: AuthorizeRun = (principal, action) => hasRole(principal, 'approver') && ['read', 'follow', 'confirm'].includes(action);

/**
 * An agent whose `deploy` call waits for a confirmation; `executed` counts the deploys. With
 * `resumesOnly` its model only answers after a confirmation (an instance that resumes runs another started).
 */
export function deployAgent(executed: string[] = [], resumesOnly = false): { agent: Agent; executed: string[] } {
  const deploy: Tool = { name: 'deploy', requireConfirmation: true, execute: () => (executed.push('deploy'), { deployed: true }) };
  const call = { toolCalls: [{ id: 'call-d', name: 'deploy', args: { env: 'prod' } }] };
  const model = new ScriptedModel(resumesOnly ? [{ text: 'deployed' }] : [call, { text: 'deployed' }]);
  return { agent: { name: OWNERSHIP_AGENT, model, tools: [deploy] } as Agent, executed };
}

/** Two clients of the routes under test; `other` may be another instance on the same store. */
export interface OwnershipSetup {
  readonly owner: HttpClient;
  readonly other: HttpClient;
  /** How many times the agent's `deploy` tool ran, on any instance. */
  readonly deploys: () => number;
}

const as = (name: string) => ({ authorization: `Bearer ${name}-token` });

/** Registers the ownership cases; `open` builds a fresh setup per test (and closes it itself). */
export function describeRunOwnership(open: () => Promise<OwnershipSetup>): void {
  async function pausedRun(t: OwnershipSetup): Promise<string> {
    const started = await t.owner.send('/runs', { method: 'POST', body: { agent: OWNERSHIP_AGENT, message: 'deploy it' }, headers: as('alice') }).result;
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await eventually(async () => (await t.owner.send(`/runs/${runId}`, { headers: as('alice') }).result).body?.status === 'paused', 10_000, 'the run pauses');
    return runId;
  }

  it("bob gets 404 run_not_found on alice's run for get, events, cancel and confirm, and nothing changes", async () => {
    const t = await open();
    const runId = await pausedRun(t);
    const notFound = { status_code: 404, error: 'Not Found', code: 'run_not_found' };
    expect(await t.other.send(`/runs/${runId}`, { headers: as('bob') }).result).toMatchObject({ status: 404, body: notFound });
    expect(await t.other.send(`/runs/${runId}/events`, { headers: as('bob') }).result).toMatchObject({ status: 404, body: notFound });
    expect(await t.other.send(`/runs/${runId}/cancel`, { method: 'POST', body: {}, headers: as('bob') }).result).toMatchObject({ status: 404, body: notFound });
    expect(await t.other.send(`/runs/${runId}/confirmations/call-d`, { method: 'POST', body: { confirmed: true }, headers: as('bob') }).result).toMatchObject({ status: 404, body: notFound });
    // the same answer as a run that does not exist
    expect(await t.other.send('/runs/run-unknown', { headers: as('bob') }).result).toMatchObject({ status: 404, body: notFound });
    expect((await t.owner.send(`/runs/${runId}`, { headers: as('alice') }).result).body).toMatchObject({ status: 'paused', pending_call_ids: ['call-d'] });
    expect(t.deploys()).toBe(0);
  });

  it('alice reads and follows her run on either side; the operator may confirm it (the hook) but not cancel it', async () => {
    const t = await open();
    const runId = await pausedRun(t);
    expect(await t.other.send(`/runs/${runId}`, { headers: as('alice') }).result).toMatchObject({ status: 200, body: { run_id: runId, status: 'paused' } });
    expect(await t.other.send(`/runs/${runId}/cancel`, { method: 'POST', body: {}, headers: as('operator') }).result).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    const stream = await SseConnection.open(t.other.baseUrl, `/runs/${runId}/events`, as('alice'));
    try {
      expect(stream.status).toBe(200);
      await stream.waitForMessages(4);
      const confirmed = await t.other.send(`/runs/${runId}/confirmations/call-d`, { method: 'POST', body: { confirmed: true }, headers: as('operator') }).result;
      expect(confirmed).toMatchObject({ status: 202, body: { run_id: runId, status: 'running' } });
      await stream.ended;
      expect(stream.items().at(-1)).toMatchObject({ type: 'terminal', status: 'completed' });
      // the confirmation record names the approver by principal id
      expect(stream.items().find((item) => item.type === 'resumed')).toEqual({ seq: expect.any(Number), type: 'resumed', call_id: 'call-d', confirmed_by: 'operator' });
    } finally {
      stream.close();
    }
    expect(t.deploys()).toBe(1);
  });

  it('alice cancels her own run from the other side', async () => {
    const t = await open();
    const runId = await pausedRun(t);
    expect(await t.other.send(`/runs/${runId}/cancel`, { method: 'POST', body: {}, headers: as('alice') }).result).toMatchObject({ status: 202, body: { status: 'cancelled' } });
  });

  it('a request without a principal answers 401 unauthenticated and starts nothing; a body user_id is refused', async () => {
    const t = await open();
    const unauthenticated = { status_code: 401, error: 'Unauthorized', code: 'unauthenticated' };
    expect(await t.owner.send('/runs', { method: 'POST', body: { agent: OWNERSHIP_AGENT, message: 'deploy it' } }).result).toMatchObject({ status: 401, body: unauthenticated });
    expect(await t.owner.send('/runs/run-unknown', { headers: { authorization: 'Bearer forged' } }).result).toMatchObject({ status: 401, body: unauthenticated });
    const spoofed = await t.owner.send('/runs', { method: 'POST', body: { agent: OWNERSHIP_AGENT, message: 'deploy it', user_id: 'alice' }, headers: as('bob') }).result;
    expect(spoofed).toMatchObject({ status: 400, body: { code: 'invalid_run_request', details: { unknown_fields: 1 } } });
    expect(t.deploys()).toBe(0);
  });
}
