import { createRuntimeServices } from '../../src/services/bundle/runtime-services-factory';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { rejection } from '../support/eval-service-harness';

const h = useHarness(() => openDatabaseHarness());
const USER = { appName: 'answers-app', userId: 'alice' };

describe('the bundle answers as spec 07 says (issue 23 item 7)', () => {
  it('defaultMaxAttempts 11 is memory_outbox_runner_max_attempts_exceeded (§6.2), before anything starts', () => {
    let error: unknown;
    try {
      createRuntimeServices('durable_local', { memoryOutbox: { defaultMaxAttempts: 11 } });
    } catch (thrown) {
      error = thrown;
    }
    expect(RuntimeServiceError.isRuntimeServiceError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'memory_outbox_runner_max_attempts_exceeded', details: { field: 'defaultMaxAttempts', max_attempts: 10 } });
  });

  it('a renamed column under a running generation is artifact_shard_adapter_failed / memory_shard_adapter_failed (§4) with the SQLSTATE only; the generation keeps running', async () => {
    const supervisor = createRuntimeServices('durable_local', { probeIntervalMs: 100 }, { dataSource: await h().dataSource() });
    h().track(() => supervisor.stop());
    await supervisor.start();
    const { artifactService, memoryService } = supervisor.services();
    await h().sql('ALTER TABLE agent_runtime_artifacts RENAME COLUMN mime_type TO mime_type_renamed');
    await h().sql('ALTER TABLE agent_runtime_memory_entries RENAME COLUMN author TO author_renamed');
    const artifact = (await rejection(artifactService.saveArtifact({ ...USER, filename: 'secret.txt', artifact: { data: new Uint8Array([1]), mimeType: 'text/plain' } }))) as RuntimeServiceError;
    expect([artifact.code, artifact.details]).toEqual(['artifact_shard_adapter_failed', { sqlstate: '42703' }]);
    const memory = (await rejection(memoryService.searchMemory({ ...USER, query: 'secret' }))) as RuntimeServiceError;
    expect([memory.code, memory.details]).toEqual(['memory_shard_adapter_failed', { sqlstate: '42703' }]);
    expect(JSON.stringify([artifact, memory, artifact.message, memory.message])).not.toMatch(/secret|mime_type|author/);
    expect(RuntimeServiceError.httpAnswers.artifact_shard_adapter_failed).toEqual({ status: 500 });
    expect(supervisor.state).toBe('running');
  });
});
