import type { Tool } from '../../src/runner/agent.types';
import type { Model, ModelRequest, ModelResponse } from '../../src/runner/models/model.types';
import { poolOf } from '../../src/database/postgres-pool';
import { Runner } from '../../src/runner/runner';
import { createRuntimeServices } from '../../src/services/bundle/runtime-services-factory';
import type { RuntimeServiceSupervisor } from '../../src/services/bundle/runtime-service-supervisor';
import type { GenerationRunnerSpec } from '../../src/services/bundle/service-generation';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually, rejection } from '../support/eval-service-harness';

const h = useHarness(() => openDatabaseHarness());
const supervisors: RuntimeServiceSupervisor[] = [];
afterEach(async () => {
  for (const supervisor of supervisors.splice(0)) await supervisor.stop().catch(() => undefined);
});

const USER = { appName: 'bundle-app', userId: 'alice' };
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

async function durable(config: Record<string, unknown> = {}): Promise<RuntimeServiceSupervisor> {
  const supervisor = createRuntimeServices('durable_local', { memoryOutbox: { pollIntervalMs: 20 }, probeIntervalMs: 100, ...config }, { dataSource: await h().dataSource() });
  supervisors.push(supervisor);
  await supervisor.start();
  return supervisor;
}

/** A model that calls `recall` with the user's message, then answers with what it saw. */
class RecallModel implements Model {
  readonly name = 'recall';
  async generate(request: ModelRequest): Promise<ModelResponse> {
    const last = request.contents.at(-1);
    if (last?.role === 'tool') return { text: `recalled ${JSON.stringify(last.response)}` };
    const user = [...request.contents].reverse().find((entry) => entry.role === 'user');
    const text = user && user.role === 'user' ? user.content.parts.map((part) => ('text' in part ? part.text : '')).join(' ') : '';
    return { toolCalls: [{ name: 'recall', args: { query: text } }] };
  }
}
const recall: Tool = {
  name: 'recall',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
  execute: async (args, ctx) => ({ hits: (await ctx.memory!.search(String(args.query), 5)).memories.map((hit) => hit.content) }),
};
const runnerOf = (spec: GenerationRunnerSpec) => new Runner({ ...spec.runnerOptions, appName: USER.appName, agent: { name: 'keeper', tools: [recall], model: new RecallModel() } });
const drain = async (stream: AsyncGenerator<unknown, unknown>) => {
  for (;;) {
    const step = await stream.next();
    if (step.done) return step.value;
  }
};

describe('the ephemeral profile (spec 07 §3, §5)', () => {
  it('artifacts and memory work; quotas hold across scopes; status shows shared routing and no outbox', async () => {
    const supervisor = createRuntimeServices('ephemeral_local', { artifact: { adapterConfig: { maxTotalArtifacts: 2, maxScopeArtifacts: 2 } } });
    supervisors.push(supervisor);
    await supervisor.start();
    const { artifactService, memoryService } = supervisor.services();
    expect(await artifactService.saveArtifact({ ...USER, sessionId: 's1', filename: 'a.txt', artifact: { data: bytes('one'), mimeType: 'text/plain' } })).toBe(1);
    expect(await artifactService.saveArtifact({ appName: 'other', userId: 'bob', filename: 'b.txt', artifact: { data: bytes('two'), mimeType: 'text/plain' } })).toBe(1);
    const refused = await rejection(artifactService.saveArtifact({ appName: 'third', userId: 'carol', filename: 'c.txt', artifact: { data: bytes('three'), mimeType: 'text/plain' } }));
    expect(refused).toMatchObject({ code: 'artifact_quota_exceeded' });
    expect(Buffer.from((await artifactService.loadArtifact({ ...USER, sessionId: 's1', filename: 'a.txt' }))!.data).toString()).toBe('one');
    const status = supervisor.status() as Record<string, any>;
    expect(status).toMatchObject({ status: 'running', profile: 'ephemeral_local', durability: 'ephemeral', session_service: 'in_memory', memory_outbox: 'disabled', pool_errors: 0 });
    expect(status.artifact).toMatchObject({ routing: 'shared', global_quota: true, active_scopes: 1, adapter: 'in_memory_artifact' });
    expect(status.memory).toMatchObject({ routing: 'shared', capabilities: { durable: false, persistence: 'volatile' } });
    expect(JSON.stringify(status)).not.toMatch(/alice|a\.txt|bundle-app/);
    const spec = supervisor.runnerSpec('ephemeral_local') as GenerationRunnerSpec;
    const runner = runnerOf(spec);
    await drain(runner.runAsync({ userId: USER.userId, sessionId: 'first', message: 'the deploy key rotates on fridays' }));
    await eventually(async () => ((await memoryService.searchMemory({ ...USER, query: 'deploy fridays' })).memories.length > 0 ? true : undefined));
    expect(() => supervisor.runnerSpec('durable_local')).toThrow(expect.objectContaining({ code: 'runtime_service_profile_mismatch' }));
  });
});

describe('start stages (spec 07 §5)', () => {
  it('an artifactRoot that does not exist fails stage artifact; a tampered table fails stage schema; nothing stays running', async () => {
    const missing = createRuntimeServices('durable_local', { artifactRoot: '/nonexistent/agent-artifacts' }, { dataSource: await h().dataSource() });
    supervisors.push(missing);
    expect(await rejection(missing.start())).toMatchObject({ code: 'runtime_service_bundle_start_failed', details: { stage: 'artifact', reason: 'artifact_root_unavailable' } });
    expect(missing.state).toBe('failed');
    await h().sql('ALTER TABLE agent_runtime_memory_entries DROP COLUMN author');
    const tampered = createRuntimeServices('durable_local', {}, { dataSource: await h().dataSource() });
    supervisors.push(tampered);
    const error = await rejection(tampered.start());
    expect(error).toMatchObject({ code: 'runtime_service_bundle_start_failed', details: { stage: 'schema', reason: 'schema_mismatch' } });
    expect(JSON.stringify((error as Error).message)).not.toContain('/nonexistent');
  });
});

describe('the durable profile (spec 07 §2, §5, §6)', () => {
  it('artifact versions, memory entries, sessions and a pending outbox job survive a new generation; a job completes on attempt 1 and a run finds its memory', async () => {
    const first = await durable();
    const gen1 = first.services();
    expect(await gen1.artifactService.saveArtifact({ ...USER, filename: 'plan.md', artifact: { data: bytes('v1'), mimeType: 'text/markdown' } })).toBe(1);
    expect(await gen1.artifactService.saveArtifact({ ...USER, filename: 'plan.md', artifact: { data: bytes('v2'), mimeType: 'text/markdown' } })).toBe(2);
    const spec1 = first.runnerSpec('durable_local') as GenerationRunnerSpec;
    expect(spec1.memoryIngestion).toMatchObject({ mode: 'durable', adapterId: 'durable-local-memory-v1' });
    await drain(runnerOf(spec1).runAsync({ userId: USER.userId, sessionId: 'ses-one', message: 'the staging database is called orchid' }));
    const jobs = await eventually(async () => {
      const rows = await h().sql<{ phase: string; attempts: number }>('SELECT phase, attempts FROM agent_runtime_memory_outbox_jobs');
      return rows.length > 0 && rows.every((row) => row.phase === 'completed') ? rows : undefined;
    });
    expect(jobs.map((job) => job.attempts)).toEqual([1]);
    // a job no adapter of this generation delivers stays pending
    const events = await gen1.sessionService.listEvents({ ...USER, sessionId: 'ses-one' });
    const pending = await gen1.memoryOutbox!.enqueue({ ...USER, baseJobId: 'ses-one:later', events: events.slice(0, 1), adapterId: 'later-memory-v1' });
    expect(pending).toMatchObject({ phase: 'pending', created: true });
    await first.stop();
    await expect(gen1.artifactService.loadArtifact({ ...USER, filename: 'plan.md' })).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });

    const second = await durable();
    const gen2 = second.services();
    expect(gen2.generation).toBe(1);
    const latest = await gen2.artifactService.loadArtifact({ ...USER, filename: 'plan.md' });
    expect([latest?.version, Buffer.from(latest!.data).toString()]).toEqual([2, 'v2']);
    expect((await gen2.sessionService.listEvents({ ...USER, sessionId: 'ses-one' })).length).toBeGreaterThan(0);
    const survived = await h().sql<{ phase: string }>('SELECT phase FROM agent_runtime_memory_outbox_jobs WHERE job_id = $1', [pending.job_id]);
    expect(survived).toEqual([{ phase: 'pending' }]);
    expect((await gen2.memoryOutbox!.health()).active_jobs).toBe(1);
    const spec2 = second.runnerSpec() as GenerationRunnerSpec;
    const result = (await drain(runnerOf(spec2).runAsync({ userId: USER.userId, sessionId: 'ses-two', message: 'staging database' }))) as { output?: { parts: Array<{ text?: string }> } };
    expect(result.output?.parts[0].text).toContain('orchid');
  }, 30_000);

  it('one active scope with a 10 ms idle timeout: A, B, A all succeed with their data, by LRU reclamation', async () => {
    const supervisor = await durable({ artifact: { maxActiveScopes: 1, idleScopeTimeoutMs: 10 } });
    const { artifactService } = supervisor.services();
    const scopes = [{ appName: 'lru', userId: 'a' }, { appName: 'lru', userId: 'b' }];
    const pause = () => new Promise((resolve) => setTimeout(resolve, 25));
    expect(await artifactService.saveArtifact({ ...scopes[0], filename: 'f', artifact: { data: bytes('A'), mimeType: 'text/plain' } })).toBe(1);
    await pause();
    expect(await artifactService.saveArtifact({ ...scopes[1], filename: 'f', artifact: { data: bytes('B'), mimeType: 'text/plain' } })).toBe(1);
    await pause();
    const again = await artifactService.loadArtifact({ ...scopes[0], filename: 'f' });
    expect(Buffer.from(again!.data).toString()).toBe('A');
    const artifact = (supervisor.status() as { artifact: { idle_evictions: number; active_scopes: number; idle_reclamation: string } }).artifact;
    expect(artifact).toMatchObject({ active_scopes: 1, idle_reclamation: 'lru_on_capacity' });
    expect(artifact.idle_evictions).toBeGreaterThanOrEqual(2);
  });

  it('a filesystem artifact root that disappears stops the generation (runtime_service_child_down); a new root serves the next one', async () => {
    const { mkdtemp, rm, mkdir } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const root = await mkdtemp(join(tmpdir(), 'bundle-artifacts-'));
    const stops: unknown[] = [];
    const supervisor = createRuntimeServices('durable_local', { artifactRoot: root, probeIntervalMs: 100 }, { dataSource: await h().dataSource(), events: { emit: (event, payload) => event === 'agent_runtime.services.generation' && stops.push(payload) } });
    supervisors.push(supervisor);
    await supervisor.start();
    expect(await supervisor.services().artifactService.saveArtifact({ ...USER, filename: 'f', artifact: { data: bytes('x'), mimeType: 'text/plain' } })).toBe(1);
    await rm(root, { recursive: true, force: true, maxRetries: 10 });
    await eventually(() => (stops.some((payload) => (payload as { reason?: unknown }).reason === 'runtime_service_child_down') ? true : undefined));
    await mkdir(root);
    await eventually(() => (supervisor.state === 'running' && supervisor.services().generation > 1 ? true : undefined), 20_000);
    expect(await supervisor.services().artifactService.saveArtifact({ ...USER, filename: 'f', artifact: { data: bytes('y'), mimeType: 'text/plain' } })).toBe(1);
    await rm(root, { recursive: true, force: true, maxRetries: 10 });
  }, 40_000);

  it('a pool error of an idle client is counted, not fatal', async () => {
    const dataSource = await h().dataSource();
    const supervisor = createRuntimeServices('durable_local', { probeIntervalMs: 100 }, { dataSource });
    supervisors.push(supervisor);
    await supervisor.start();
    const pool = poolOf(dataSource) as unknown as { emit(event: string, error: Error): void };
    pool.emit('error', new Error('idle client lost'));
    expect(supervisor.status()).toMatchObject({ status: 'running', pool_errors: 1 });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(supervisor.state).toBe('running');
  });

  it('a failing dependency stops the generation: health down, old references stale, the next generation serves', async () => {
    const supervisor = await durable();
    const old = supervisor.services();
    expect(old.generation).toBe(1);
    // the outbox's health writes a sentinel row; holding that row's lock makes the probe exceed 1000 ms
    await h().sql('BEGIN');
    await h().sql("SELECT * FROM agent_runtime_memory_outbox_usage WHERE usage_key = 'health' FOR UPDATE");
    await eventually(() => (supervisor.state !== 'running' ? true : undefined));
    expect(() => supervisor.services()).toThrow(expect.objectContaining({ code: 'runtime_service_bundle_unavailable' }));
    expect(await rejection(old.artifactService.listArtifactKeys(USER))).toMatchObject({ code: 'runtime_service_generation_stale' });
    await h().sql('COMMIT');
    await eventually(() => (supervisor.state === 'running' ? true : undefined), 20_000);
    const next = supervisor.services();
    expect(next.generation).toBeGreaterThan(1);
    expect(await next.artifactService.saveArtifact({ ...USER, filename: 'after.txt', artifact: { data: bytes('x'), mimeType: 'text/plain' } })).toBe(1);
    expect(RuntimeServiceError.isRuntimeServiceError(await rejection(old.memoryService.searchMemory({ ...USER, query: 'x' })))).toBe(true);
  }, 40_000);
});
