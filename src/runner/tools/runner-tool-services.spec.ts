import type { ArtifactService, MemoryService } from './tool-services.types';
import type { ToolContext } from '../agent.types';
import { APP, USER, countingTool, drain, makeRunner, runnerError, scriptedAgent } from '../testing/runner-harness';

/** Records every call with its arguments; answers with fixed values. */
function recordingServices() {
  const calls: Array<{ method: string; args: unknown[] }> = [];
  const record = (method: string, answer: unknown) => async (...args: unknown[]) => {
    calls.push({ method, args });
    return answer;
  };
  const artifactService: ArtifactService = {
    saveArtifact: record('saveArtifact', 3) as ArtifactService['saveArtifact'],
    loadArtifact: record('loadArtifact', undefined) as ArtifactService['loadArtifact'],
    listArtifactKeys: record('listArtifactKeys', { keys: ['a.txt'], next_cursor: null, has_more: false }) as ArtifactService['listArtifactKeys'],
    listVersions: record('listVersions', { versions: [], next_cursor: null, has_more: false }) as ArtifactService['listVersions'],
    deleteArtifact: record('deleteArtifact', 1) as ArtifactService['deleteArtifact'],
  };
  const memoryService: MemoryService = {
    addSessionToMemory: record('addSessionToMemory', { added: 0, duplicates: 0 }) as MemoryService['addSessionToMemory'],
    addEvents: record('addEvents', { added: 0, duplicates: 0 }) as MemoryService['addEvents'],
    searchMemory: record('searchMemory', { memories: [{ id: 'm1', content: 'x', author: 'user', timestamp_ms: 1, score: 1 }] }) as MemoryService['searchMemory'],
    eraseMemory: record('eraseMemory', { epoch: 1 }) as MemoryService['eraseMemory'],
  };
  return { calls, artifactService, memoryService };
}

describe('tool access to artifacts and memory (spec 03 §13)', () => {
  it('ctx.artifacts is scoped to the invocation\'s app, user and session, ctx.memory to app and user; both carry the call\'s signal', async () => {
    const services = recordingServices();
    let seen: ToolContext | undefined;
    const { tool } = countingTool('keep', async (_args, ctx) => {
      seen = ctx;
      const version = await ctx.artifacts!.save('notes.txt', { data: new Uint8Array([1, 2]), mimeType: 'text/plain' }, { tag: 'x' });
      const hits = await ctx.memory!.search('runbook', 3);
      await ctx.artifacts!.list({ limit: 5 });
      await ctx.artifacts!.delete('notes.txt', 'latest');
      return { version, hits: hits.memories.length };
    });
    const runner = makeRunner({ agent: scriptedAgent([{ toolCalls: [{ name: 'keep', args: {} }] }, { text: 'done' }], { tools: [tool] }), artifactService: services.artifactService, memoryService: services.memoryService });
    const { result } = await drain(runner.runAsync({ userId: USER, sessionId: 'ses-tools', message: 'go' }));
    expect(result?.status).toBe('completed');
    expect(services.calls.map((call) => call.method)).toEqual(['saveArtifact', 'searchMemory', 'listArtifactKeys', 'deleteArtifact']);
    expect(services.calls[0].args[0]).toEqual({ appName: APP, userId: USER, sessionId: 'ses-tools', filename: 'notes.txt', artifact: { data: new Uint8Array([1, 2]), mimeType: 'text/plain' }, customMetadata: { tag: 'x' } });
    expect(services.calls[1].args[0]).toEqual({ appName: APP, userId: USER, query: 'runbook', limit: 3 });
    expect(services.calls[2].args.slice(0, 2)).toEqual([{ appName: APP, userId: USER, sessionId: 'ses-tools' }, { limit: 5 }]);
    expect(services.calls[3].args[0]).toEqual({ appName: APP, userId: USER, sessionId: 'ses-tools', filename: 'notes.txt', version: 'latest' });
    for (const call of services.calls) expect((call.args.at(-1) as { signal: AbortSignal }).signal).toBe(seen!.signal);
  });

  it('without the services the fields are absent', async () => {
    let seen: ToolContext | undefined;
    const { tool } = countingTool('look', (_args, ctx) => {
      seen = ctx;
      return { ok: true };
    });
    const runner = makeRunner({ agent: scriptedAgent([{ toolCalls: [{ name: 'look', args: {} }] }, { text: 'done' }], { tools: [tool] }) });
    await drain(runner.runAsync({ userId: USER, message: 'go' }));
    expect(seen).toBeDefined();
    expect('artifacts' in (seen as object)).toBe(false);
    expect('memory' in (seen as object)).toBe(false);
  });

  it('refuses a service without the whole interface', async () => {
    const error = await runnerError(Promise.resolve().then(() => makeRunner({ agent: scriptedAgent([{ text: 'x' }]), artifactService: { saveArtifact: () => 1 } as never })));
    expect(error).toMatchObject({ code: 'invalid_runner_options', details: { field: 'artifactService' } });
  });
});
