import { describeSessionServiceContract, runnerError } from './testing/session-service-contract';
import { thrown } from '../../shared/testing/thrown';
import { InMemorySessionService } from './in-memory-session-service';
import { RunnerError } from '../../runner/runner.errors';

describeSessionServiceContract('InMemorySessionService', async (clock) => new InMemorySessionService({ clock }));

describe('InMemorySessionService options', () => {
  it('uses the system clock by default', async () => {
    const before = Date.now();
    const record = await new InMemorySessionService().createSession({ appName: 'app', userId: 'u1' });
    expect(record.created_at_ms).toBeGreaterThanOrEqual(before);
    expect(record.created_at_ms).toBeLessThanOrEqual(Date.now());
  });

  it.each([
    ['an unknown key', { schema: 'public' }, { field: 'schema' }],
    ['a clock without wallNow', { clock: { monotonicNow: () => 0 } }, { field: 'clock' }],
    ['options that are not a plain object', 'fast', { field: 'options' }],
  ])('refuses %s with invalid_runner_options', (_label, options, details) => {
    const error = thrown(() => new InMemorySessionService(options as never), RunnerError);
    expect(error).toMatchObject({ code: 'invalid_runner_options', details });
  });

  it('keeps sessions of one instance apart from another instance', async () => {
    const one = new InMemorySessionService();
    const record = await one.createSession({ appName: 'app', userId: 'u1' });
    const ref = { appName: 'app', userId: 'u1', sessionId: record.session_id };
    expect(await new InMemorySessionService().getSession(ref)).toBeUndefined();
    await runnerError(new InMemorySessionService().appendEvent(ref, { event_id: 'e', invocation_id: 'i', author: 'user', kind: 'user_message', content: 'hi' }), 'session_not_found');
  });
});
