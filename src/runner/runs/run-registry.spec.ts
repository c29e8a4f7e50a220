import { ManualClock } from '../../shared/time/manual-clock';
import { InMemoryRunStore } from './stores/in-memory-run-store';
import { RunRegistry } from './run-registry';
import type { RegistryRunner, RunStreamItem, RunStatusRecord } from './run-registry.types';
import type { RunRegistryOptions } from './run-registry-options';
import { RunnerError } from '../runner.errors';
import type { ResumeRequest } from '../runner.types';
import { TOKEN_ID_PATTERN } from '../../shared/ids/id-rule';
import { RegistryRunnerDouble, type ScriptedInvocation } from './testing/registry-runner-double';

/** Lets every queued promise job and store write run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function collect(iterable: AsyncIterable<RunStreamItem>): Promise<RunStreamItem[]> {
  const items: RunStreamItem[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** The RunnerError `work` rejects with, as `{code, details}`. */
async function failure(work: Promise<unknown> | (() => unknown)): Promise<{ code: string; details?: unknown }> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (!RunnerError.isRunnerError(error)) throw error;
    return error.details === undefined ? { code: error.code } : { code: error.code, details: error.details };
  }
  throw new Error('expected a RunnerError');
}

const types = (items: readonly RunStreamItem[]) => items.map((item) => item.type);

function setup(options: Partial<RunRegistryOptions> = {}) {
  const runner = new RegistryRunnerDouble('assistant');
  const clock = new ManualClock();
  const registry = new RunRegistry({ runners: [runner], clock, ...options });
  const start = async (overrides: Record<string, unknown> = {}) => {
    const started = await registry.start({ agent: 'assistant', userId: 'user-1', message: 'hello', ...overrides });
    await flush();
    return { ...started, invocation: runner.last };
  };
  return { runner, clock, registry, start };
}

/** A run paused on `calls`, with its first invocation. */
async function pausedRun(t: ReturnType<typeof setup>, calls: readonly string[] = ['call-1']) {
  const started = await t.start();
  started.invocation.admit('inv-1').event().pause(calls);
  await flush();
  return started;
}

describe('RunRegistry (spec 03 §9)', () => {
  describe('options', () => {
    it.each([
      [{ runners: [] as RegistryRunner[], maxRuns: 0 }, { field: 'maxRuns' }],
      [{ runners: [] as RegistryRunner[], finishedRunTtlMs: -1 }, { field: 'finishedRunTtlMs' }],
      [{ runners: [] as RegistryRunner[], maxBufferedItems: 1.5 }, { field: 'maxBufferedItems' }],
      [{ runners: [] as RegistryRunner[], shutdownGraceMs: 'soon' }, { field: 'shutdownGraceMs' }],
      [{ runners: [] as RegistryRunner[], traceStore: {} }, { field: 'traceStore' }],
      [{ runners: [] as RegistryRunner[], events: {} }, { field: 'events' }],
      [{}, { field: 'runners' }],
      [{ runners: [{ agent: { name: 'x' } }] }, { field: 'runners' }],
    ])('refuses %j with invalid_runner_options', async (options, details) => {
      expect(await failure(() => new RunRegistry(options as unknown as RunRegistryOptions))).toEqual({ code: 'invalid_runner_options', details });
    });

    it('refuses two runners of the same root agent', async () => {
      const runners = [new RegistryRunnerDouble('a'), new RegistryRunnerDouble('a')];
      expect(await failure(() => new RunRegistry({ runners }))).toEqual({ code: 'invalid_runner_options', details: { field: 'runners' } });
    });

    it('never calls a getter of the options', async () => {
      const options = Object.defineProperty({ runners: [] }, 'maxRuns', {
        enumerable: true,
        get: () => {
          throw new Error('getter ran');
        },
      });
      expect(await failure(() => new RunRegistry(options))).toEqual({ code: 'invalid_runner_options', details: { field: 'maxRuns' } });
    });
  });

  describe('start', () => {
    it('answers {run_id, session_id} before the run is admitted, with ids of the spec patterns', async () => {
      const t = setup();
      const started = await t.registry.start({ agent: 'assistant', userId: 'user-1', message: 'hello' });
      expect(Object.keys(started).sort()).toEqual(['run_id', 'session_id']);
      expect(started.run_id).toMatch(/^run-[A-Za-z0-9_-]{24}$/);
      expect(started.session_id).toMatch(TOKEN_ID_PATTERN);
      expect(Object.isFrozen(started)).toBe(true);
      await flush();
      expect(await t.registry.get(started.run_id)).toMatchObject({ status: 'pending', invocation_id: null, last_seq: 0 });
      const request = t.runner.last.request;
      expect(request).toMatchObject({ userId: 'user-1', sessionId: started.session_id, message: 'hello', runId: started.run_id });
      expect(request.signal).toBeInstanceOf(AbortSignal);
    });

    it('passes its events to every run and resume request, and no events key without them', async () => {
      const events = { emit: () => undefined };
      const t = setup({ events });
      const { run_id, invocation } = await t.start();
      expect(invocation.request.events).toBe(events);
      invocation.admit('inv-1').pause(['call-1']);
      await flush();
      await t.registry.confirm(run_id, 'call-1', { confirmed: true });
      await flush();
      expect(t.runner.last.request.events).toBe(events);
      const plain = setup();
      expect('events' in (await plain.start()).invocation.request).toBe(false);
    });

    it('keeps a given session id and passes durable on', async () => {
      const t = setup();
      const started = await t.start({ sessionId: 'ses.custom:1', durable: true });
      expect(started.session_id).toBe('ses.custom:1');
      expect(started.invocation.request).toMatchObject({ sessionId: 'ses.custom:1', durable: true });
    });

    it.each([
      [{ sessionId: 'bad id' }, 'session_id'],
      [{ sessionId: 'x'.repeat(129) }, 'session_id'],
      [{ userId: '' }, 'user_id'],
      [{ userId: 'a\u0000b' }, 'user_id'],
      [{ message: 42 }, 'message'],
      [{ message: { role: 'model', parts: [] } }, 'message'],
      [{ durable: 'yes' }, 'durable'],
      [{ extra: 1 }, 'request'],
      [{ agent: undefined }, 'agent'],
    ])('refuses %j with invalid_run_request naming %s, and starts nothing', async (overrides, field) => {
      const t = setup();
      const request = { agent: 'assistant', userId: 'user-1', message: 'hello', ...overrides };
      expect(await failure(t.registry.start(request as never))).toEqual({ code: 'invalid_run_request', details: { field } });
      expect(t.runner.invocations).toHaveLength(0);
    });

    it('refuses a request that is not an object', async () => {
      const t = setup();
      expect(await failure(t.registry.start(null as never))).toEqual({ code: 'invalid_run_request', details: { field: 'request' } });
    });

    it('gives agent_not_found for an agent no runner serves', async () => {
      const t = setup();
      expect(await failure(t.registry.start({ agent: 'other', userId: 'user-1', message: 'hi' }))).toEqual({ code: 'agent_not_found' });
    });

    it('sets running and the invocation id when admission grants', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit('inv-42');
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'running', invocation_id: 'inv-42' });
    });
  });

  describe('capacity (maxRuns)', () => {
    it('refuses a start with run_capacity_reached {limit} when every retained run is unfinished', async () => {
      const t = setup({ maxRuns: 2 });
      await t.start();
      const second = await t.start();
      second.invocation.admit().pause(['call-1']);
      await flush();
      expect(await failure(t.registry.start({ agent: 'assistant', userId: 'user-1', message: 'hi' }))).toEqual({ code: 'run_capacity_reached', details: { limit: 2 } });
      expect(t.runner.invocations).toHaveLength(2);
    });

    it('makes room by dropping the oldest finished run', async () => {
      const t = setup({ maxRuns: 2 });
      const first = await t.start();
      first.invocation.admit().complete();
      await t.start();
      await flush();
      const third = await t.start();
      expect(await failure(t.registry.get(first.run_id))).toEqual({ code: 'run_not_found' });
      expect(await t.registry.get(third.run_id)).toMatchObject({ status: 'pending' });
    });
  });

  describe('get', () => {
    it('answers a frozen record of exactly the spec keys, without content or the user id', async () => {
      const t = setup();
      const { run_id, session_id, invocation } = await t.start();
      invocation.admit('inv-1').event().event();
      await flush();
      const record = await t.registry.get(run_id);
      expect(Object.keys(record).sort()).toEqual(
        ['agent', 'created_at_ms', 'error', 'invocation_id', 'last_seq', 'pending_call_ids', 'run_id', 'schema_version', 'session_id', 'status', 'updated_at_ms'].sort(),
      );
      expect(record).toEqual({
        schema_version: 1,
        run_id,
        agent: 'assistant',
        session_id,
        invocation_id: 'inv-1',
        status: 'running',
        pending_call_ids: [],
        created_at_ms: t.clock.wallNow(),
        updated_at_ms: t.clock.wallNow(),
        last_seq: 2,
        error: null,
      });
      expect(Object.isFrozen(record)).toBe(true);
      expect(JSON.stringify(record)).not.toContain('user-1');
      expect(JSON.stringify(record)).not.toContain('event 1');
    });

    it.each([['run-unknown'], [''], ['a\u0000b'], [42], [null], [{}]])('gives run_not_found for %j, never a crash', async (id) => {
      const t = setup();
      expect(await failure(t.registry.get(id as never))).toEqual({ code: 'run_not_found' });
      expect(await failure(t.registry.cancel(id as never))).toEqual({ code: 'run_not_found' });
      expect(await failure(t.registry.confirm(id as never, 'call-1', { confirmed: true }))).toEqual({ code: 'run_not_found' });
      expect(await failure(t.registry.subscribe(id as never).ready())).toEqual({ code: 'run_not_found' });
    });
  });

  describe('the stream', () => {
    it('numbers items 1..n: events in order, then exactly one terminal item; the iteration ends after it', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      const live = collect(t.registry.subscribe(run_id));
      invocation.admit().event('user_message').event('model_turn').event('final_output').complete();
      const items = await live;
      expect(items.map((item) => item.seq)).toEqual([1, 2, 3, 4]);
      expect(types(items)).toEqual(['event', 'event', 'event', 'terminal']);
      expect(items.slice(0, 3).map((item) => item.type === 'event' && item.event.kind)).toEqual(['user_message', 'model_turn', 'final_output']);
      expect(items[3]).toEqual({ seq: 4, type: 'terminal', status: 'completed' });
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'completed', last_seq: 4, error: null });
    });

    it('replays the buffered items, then follows live ones', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().event().event();
      await flush();
      const subscription = t.registry.subscribe(run_id);
      const first = await subscription.next();
      const second = await subscription.next();
      expect([first.value?.seq, second.value?.seq]).toEqual([1, 2]);
      const third = subscription.next();
      invocation.event();
      expect((await third).value).toMatchObject({ seq: 3, type: 'event' });
      invocation.complete();
      expect((await subscription.next()).value).toMatchObject({ seq: 4, type: 'terminal' });
      expect(await subscription.next()).toEqual({ done: true, value: undefined });
    });

    it('replays only the items after afterSeq', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().event().event().event().complete();
      await flush();
      expect((await collect(t.registry.subscribe(run_id, { afterSeq: 2 }))).map((item) => item.seq)).toEqual([3, 4]);
      expect(await collect(t.registry.subscribe(run_id, { afterSeq: 4 }))).toEqual([]);
    });

    it('refuses an afterSeq past the last item, or not a non-negative integer', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().event();
      await flush();
      expect(await failure(t.registry.subscribe(run_id, { afterSeq: 2 }).ready())).toEqual({ code: 'invalid_run_request', details: { field: 'after_seq' } });
      for (const afterSeq of [-1, 1.5, '1', Number.NaN]) {
        expect(await failure(() => t.registry.subscribe(run_id, { afterSeq: afterSeq as number }))).toEqual({ code: 'invalid_run_request', details: { field: 'after_seq' } });
      }
    });

    it('gives run_events_evicted {oldest_seq} when the replay starts before the buffer', async () => {
      const t = setup({ maxBufferedItems: 3 });
      const { run_id, invocation } = await t.start();
      invocation.admit().event().event().event().event().event();
      await flush();
      expect(await failure(t.registry.subscribe(run_id).ready())).toEqual({ code: 'run_events_evicted', details: { oldest_seq: 3 } });
      expect(await failure(collect(t.registry.subscribe(run_id, { afterSeq: 1 })))).toEqual({ code: 'run_events_evicted', details: { oldest_seq: 3 } });
      const fromBuffer = t.registry.subscribe(run_id, { afterSeq: 2 });
      expect((await fromBuffer.next()).value?.seq).toBe(3);
      await fromBuffer.return();
    });

    it('a subscriber that falls behind the buffer gets run_events_evicted instead of a gap', async () => {
      const t = setup({ maxBufferedItems: 2 });
      const { run_id, invocation } = await t.start();
      invocation.admit().event();
      await flush();
      const slow = t.registry.subscribe(run_id);
      expect((await slow.next()).value?.seq).toBe(1);
      invocation.event().event().event();
      await flush();
      expect(await failure(slow.next())).toEqual({ code: 'run_events_evicted', details: { oldest_seq: 3 } });
      expect(await slow.next()).toEqual({ done: true, value: undefined });
    });

    it('ending one iteration detaches only that subscriber; the run and the others go on', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      const quitter = t.registry.subscribe(run_id);
      const stayer = collect(t.registry.subscribe(run_id));
      invocation.admit().event();
      for await (const item of quitter) {
        expect(item.seq).toBe(1);
        break;
      }
      invocation.event().complete();
      expect((await stayer).map((item) => item.seq)).toEqual([1, 2, 3]);
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'completed' });
      expect(await quitter.next()).toEqual({ done: true, value: undefined });
    });

    it('return() ends a next() that is waiting for a live item', async () => {
      const t = setup();
      const { run_id } = await t.start();
      const subscription = t.registry.subscribe(run_id);
      const waiting = subscription.next();
      await flush();
      await subscription.return();
      expect(await waiting).toEqual({ done: true, value: undefined });
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'pending' });
    });

    it('stores the admission before the first event: the first event item sees status running', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      const statuses: string[] = [];
      const watching = (async () => {
        for await (const item of t.registry.subscribe(run_id)) statuses.push(`${item.type}:${(await t.registry.get(run_id)).invocation_id ?? 'null'}`);
      })();
      invocation.admit('inv-7').event().complete();
      await watching;
      expect(statuses[0]).toBe('event:inv-7');
    });
  });

  describe('failures', () => {
    it('a RunnerError fails the run with its code and details, in the record and the terminal item', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().fail(new RunnerError('model_failed', { reason: 'http_status', status: 500 }));
      await flush();
      const error = { code: 'model_failed', details: { reason: 'http_status', status: 500 } };
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'failed', error });
      expect(await collect(t.registry.subscribe(run_id))).toEqual([{ seq: 1, type: 'terminal', status: 'failed', error }]);
    });

    it('an admission failure of a start fails the run: the client reads it in the record', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.fail(new RunnerError('admission_failed', { reason: 'concurrency_limit_reached' }));
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'failed', invocation_id: null, error: { code: 'admission_failed', details: { reason: 'concurrency_limit_reached' } } });
    });

    it('a foreign error is internal_error, and its text appears nowhere', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().fail(new Error('secret token sk-123'));
      await flush();
      const record = await t.registry.get(run_id);
      const items = await collect(t.registry.subscribe(run_id));
      expect(record.error).toEqual({ code: 'internal_error', details: {} });
      expect(items.at(-1)).toEqual({ seq: 1, type: 'terminal', status: 'failed', error: { code: 'internal_error', details: {} } });
      expect(JSON.stringify([record, items])).not.toContain('sk-123');
    });

    it('runTimeoutMs expiry ends the run timed_out with {code: timeout, details: {timeout_ms}}', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().fail(new RunnerError('timeout', { timeout_ms: 50 }));
      await flush();
      const error = { code: 'timeout', details: { timeout_ms: 50 } };
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'timed_out', error });
      expect((await collect(t.registry.subscribe(run_id))).at(-1)).toEqual({ seq: 1, type: 'terminal', status: 'timed_out', error });
    });

    it('a store failure mid-run fails the run and closes the invocation, so it cannot hang', async () => {
      class FailingStore extends InMemoryRunStore {
        override async append(...args: Parameters<InMemoryRunStore['append']>) {
          if (args[1].type === 'event') throw new Error('connection reset');
          return super.append(...args);
        }
      }
      const t = setup({ store: new FailingStore() });
      const { run_id, invocation } = await t.start();
      invocation.admit().event();
      await flush();
      expect(invocation.closed).toBe(true);
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'failed', error: { code: 'internal_error', details: {} } });
      expect(t.registry.status().active).toBe(0);
    });

    it('a runner that throws synchronously fails the run instead of crashing the registry', async () => {
      const runner = new RegistryRunnerDouble('assistant');
      runner.runAsync = () => {
        throw new RunnerError('session_store_failed', { operation: 'get_session' });
      };
      const registry = new RunRegistry({ runners: [runner], clock: new ManualClock() });
      const { run_id } = await registry.start({ agent: 'assistant', userId: 'u', message: 'hi' });
      await flush();
      expect(await registry.get(run_id)).toMatchObject({ status: 'failed', error: { code: 'session_store_failed' } });
    });
  });

  describe('cancel', () => {
    it('cancels a pending run: the signal aborts with the reason, and the terminal item says why', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      const record = await t.registry.cancel(run_id, 'user_asked');
      expect(record).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'user_asked' } } });
      expect(invocation.request.signal?.aborted).toBe(true);
      expect(invocation.request.signal?.reason).toBe('user_asked');
      await flush();
      expect(invocation.closed).toBe(true);
      expect(await collect(t.registry.subscribe(run_id))).toEqual([{ seq: 1, type: 'terminal', status: 'cancelled', cancelled: 'user_asked' }]);
    });

    it('cancels a running run; events the invocation still produces are discarded, and there is one terminal item', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.ignoreAbort = true;
      invocation.admit().event();
      await flush();
      await t.registry.cancel(run_id);
      invocation.event().event().complete();
      await flush();
      const items = await collect(t.registry.subscribe(run_id));
      expect(types(items)).toEqual(['event', 'terminal']);
      expect(items[1]).toEqual({ seq: 2, type: 'terminal', status: 'cancelled', cancelled: 'cancelled' });
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'cancelled', last_seq: 2 });
      expect(invocation.closed).toBe(true);
    });

    it('cancels a paused run: its continuations are discarded first', async () => {
      const t = setup();
      const { run_id, session_id } = await pausedRun(t);
      const record = await t.registry.cancel(run_id, 'not_needed');
      expect(t.runner.discarded).toEqual([{ userId: 'user-1', sessionId: session_id, invocationId: 'inv-1' }]);
      expect(record).toMatchObject({ status: 'cancelled', pending_call_ids: [] });
      expect((await collect(t.registry.subscribe(run_id))).map((item) => item.type)).toEqual(['event', 'paused', 'terminal']);
    });

    it('a failure to discard the continuations leaves the run paused, so the cancel can be retried', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t);
      t.runner.discardFailure = new RunnerError('session_store_failed', { operation: 'update_state' });
      expect(await failure(t.registry.cancel(run_id))).toEqual({ code: 'session_store_failed', details: { operation: 'update_state' } });
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused' });
      t.runner.discardFailure = undefined;
      expect(await t.registry.cancel(run_id)).toMatchObject({ status: 'cancelled' });
    });

    it('refuses a finished run with run_not_active {status}', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().complete();
      await flush();
      expect(await failure(t.registry.cancel(run_id))).toEqual({ code: 'run_not_active', details: { status: 'completed' } });
      await t.registry.start({ agent: 'assistant', userId: 'u', message: 'hi' });
      const second = await t.start();
      await t.registry.cancel(second.run_id);
      expect(await failure(t.registry.cancel(second.run_id))).toEqual({ code: 'run_not_active', details: { status: 'cancelled' } });
    });

    it.each([[''], ['x'.repeat(129)], [42], [null]])('refuses the reason %j with invalid_run_request {field: reason}', async (reason) => {
      const t = setup();
      const { run_id } = await t.start();
      expect(await failure(() => t.registry.cancel(run_id, reason as never))).toEqual({ code: 'invalid_run_request', details: { field: 'reason' } });
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'pending' });
    });

    it('two concurrent cancels: one cancels, the other finds the run finished', async () => {
      const t = setup();
      const { run_id } = await t.start();
      const outcomes = await Promise.allSettled([t.registry.cancel(run_id, 'a'), t.registry.cancel(run_id, 'b')]);
      expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { status: 'cancelled' } });
      expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { code: 'run_not_active' } });
      expect((await collect(t.registry.subscribe(run_id))).filter((item) => item.type === 'terminal')).toHaveLength(1);
    });

    it('a completion that lands first wins over a later cancel', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      invocation.admit().complete();
      await flush();
      expect(await failure(t.registry.cancel(run_id))).toEqual({ code: 'run_not_active', details: { status: 'completed' } });
      expect((await collect(t.registry.subscribe(run_id))).at(-1)).toEqual({ seq: 1, type: 'terminal', status: 'completed' });
    });
  });

  describe('confirm (spec 03 §7, §9)', () => {
    it('emits resumed, resumes with the decision in the background, and the run completes', async () => {
      const t = setup();
      const { run_id, session_id } = await pausedRun(t, ['call-1']);
      const record = await t.registry.confirm(run_id, 'call-1', { confirmed: true, payload: { note: 'ok' } });
      expect(record).toMatchObject({ status: 'running', pending_call_ids: [], invocation_id: 'inv-1' });
      await flush();
      const resume = t.runner.last;
      expect(resume.kind).toBe('resume');
      expect(resume.request).toMatchObject({ userId: 'user-1', sessionId: session_id, invocationId: 'inv-1', callId: 'call-1', confirmed: true, payload: { note: 'ok' }, runId: run_id });
      resume.admit().event('tool_response').complete();
      const items = await collect(t.registry.subscribe(run_id));
      expect(types(items)).toEqual(['event', 'paused', 'resumed', 'event', 'terminal']);
      expect(items[1]).toEqual({ seq: 2, type: 'paused', pending_call_ids: ['call-1'] });
      expect(items.at(-1)).toEqual({ seq: 5, type: 'terminal', status: 'completed' });
    });

    it('a paused record lists the pending calls', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t, ['call-1', 'call-2']);
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused', pending_call_ids: ['call-1', 'call-2'], invocation_id: 'inv-1' });
    });

    it('validates before anything changes', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t, ['call-1']);
      expect(await failure(t.registry.confirm(run_id, 'call-1', { confirmed: 'yes' } as never))).toEqual({ code: 'resume_input_required', details: { field: 'confirmed' } });
      expect(await failure(t.registry.confirm(run_id, 'call-1', { confirmed: true, payload: 'x'.repeat(100) }))).toEqual({
        code: 'resume_input_required',
        details: { field: 'payload' },
      });
      expect(await failure(t.registry.confirm(run_id, 'call-9', { confirmed: true }))).toEqual({ code: 'invocation_not_found' });
      expect(await failure(t.registry.confirm(run_id, 'a\u0000' as never, { confirmed: true }))).toEqual({ code: 'invocation_not_found' });
      expect(await failure(t.registry.confirm(run_id, 'call-1', { confirmed: true, extra: 1 } as never))).toEqual({ code: 'invalid_run_request', details: { field: 'input' } });
      expect(await failure(t.registry.confirm(run_id, 'call-1', null as never))).toEqual({ code: 'resume_input_required', details: { field: 'confirmed' } });
      expect(t.runner.invocations).toHaveLength(1);
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused', last_seq: 2 });
    });

    it('refuses a run that is not paused with run_not_active {status}', async () => {
      const t = setup();
      const { run_id, invocation } = await t.start();
      expect(await failure(t.registry.confirm(run_id, 'call-1', { confirmed: true }))).toEqual({ code: 'run_not_active', details: { status: 'pending' } });
      invocation.admit().complete();
      await flush();
      expect(await failure(t.registry.confirm(run_id, 'call-1', { confirmed: true }))).toEqual({ code: 'run_not_active', details: { status: 'completed' } });
    });

    it('two concurrent confirmations: one resumes, the other finds the run running', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t, ['call-1', 'call-2']);
      const outcomes = await Promise.allSettled([t.registry.confirm(run_id, 'call-1', { confirmed: true }), t.registry.confirm(run_id, 'call-2', { confirmed: false })]);
      expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { status: 'running' } });
      expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { code: 'run_not_active', details: { status: 'running' } } });
      await flush();
      expect(t.runner.invocations.filter((invocation) => invocation.kind === 'resume')).toHaveLength(1);
    });

    it('an admission failure of the resume yields resume_failed; the run is paused again and can be confirmed later', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t, ['call-1']);
      await t.registry.confirm(run_id, 'call-1', { confirmed: true });
      await flush();
      t.runner.last.fail(new RunnerError('admission_failed', { reason: 'admission_queue_full' }));
      await flush();
      const error = { code: 'admission_failed', details: { reason: 'admission_queue_full' } };
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused', pending_call_ids: ['call-1'], error });
      await t.registry.confirm(run_id, 'call-1', { confirmed: false });
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'running', error: null });
      t.runner.last.admit().complete();
      const items = await collect(t.registry.subscribe(run_id));
      expect(types(items)).toEqual(['event', 'paused', 'resumed', 'resume_failed', 'resumed', 'terminal']);
      expect(items[3]).toEqual({ seq: 4, type: 'resume_failed', error });
    });

    it('any failure before the resume started executing yields resume_failed', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t);
      await t.registry.confirm(run_id, 'call-1', { confirmed: true });
      await flush();
      t.runner.last.fail(new RunnerError('invocation_not_found'));
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused', error: { code: 'invocation_not_found', details: {} } });
    });

    it('a failure after the resume was admitted fails the run', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t);
      await t.registry.confirm(run_id, 'call-1', { confirmed: true });
      await flush();
      t.runner.last.admit().fail(new RunnerError('model_failed', { reason: 'network' }));
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'failed', error: { code: 'model_failed', details: { reason: 'network' } } });
    });

    it('a resumed run can be cancelled; the terminal item is cancelled, not resume_failed', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t);
      await t.registry.confirm(run_id, 'call-1', { confirmed: true });
      await flush();
      await t.registry.cancel(run_id, 'changed_mind');
      await flush();
      expect(t.runner.last.request.signal?.aborted).toBe(true);
      expect((await collect(t.registry.subscribe(run_id))).slice(-2)).toEqual([
        { seq: 3, type: 'resumed' },
        { seq: 4, type: 'terminal', status: 'cancelled', cancelled: 'changed_mind' },
      ]);
    });

    it('a resume that pauses again lists the calls still pending', async () => {
      const t = setup();
      const { run_id } = await pausedRun(t, ['call-1', 'call-2']);
      await t.registry.confirm(run_id, 'call-1', { confirmed: true });
      await flush();
      t.runner.last.admit().pause(['call-2']);
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused', pending_call_ids: ['call-2'] });
    });
  });

  describe('replaceRunners (spec 03 §13)', () => {
    it('new starts and resumes use the new runner; an active run finishes on its own', async () => {
      const t = setup();
      const active = await t.start();
      const paused = await pausedRun(t);
      const replacement = new RegistryRunnerDouble('assistant');
      t.registry.replaceRunners([replacement, new RegistryRunnerDouble('helper')]);
      expect(t.registry.getRunner('assistant')).toBe(replacement);
      expect(t.registry.getRunner('helper').agent.name).toBe('helper');

      await t.registry.start({ agent: 'assistant', userId: 'u', message: 'hi' });
      await t.registry.confirm(paused.run_id, 'call-1', { confirmed: true });
      await flush();
      expect(replacement.invocations.map((invocation) => invocation.kind)).toEqual(['run', 'resume']);

      active.invocation.admit().complete();
      await flush();
      expect(await t.registry.get(active.run_id)).toMatchObject({ status: 'completed' });
    });

    it('an agent the new runners lack is agent_not_found; bad runners are refused and nothing changes', async () => {
      const t = setup();
      t.registry.replaceRunners([new RegistryRunnerDouble('helper')]);
      expect(await failure(() => t.registry.getRunner('assistant'))).toEqual({ code: 'agent_not_found' });
      expect(await failure(() => t.registry.replaceRunners([{} as RegistryRunner]))).toEqual({ code: 'invalid_runner_options', details: { field: 'runners' } });
      expect(t.registry.getRunner('helper').agent.name).toBe('helper');
    });
  });

  describe('finished runs expire after finishedRunTtlMs', () => {
    it('a finished run stays readable until its time is up, then is gone', async () => {
      const t = setup({ finishedRunTtlMs: 1000 });
      const { run_id, invocation } = await t.start();
      invocation.admit().complete();
      await flush();
      t.clock.advance(999);
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'completed' });
      t.clock.advance(1);
      await flush();
      expect(await failure(t.registry.get(run_id))).toEqual({ code: 'run_not_found' });
      expect(t.clock.pendingTimers).toBe(0);
    });

    it('an unfinished run never expires', async () => {
      const t = setup({ finishedRunTtlMs: 10 });
      const { run_id } = await pausedRun(t);
      t.clock.advance(1_000_000);
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused' });
    });
  });

  describe('terminal writes across a store outage', () => {
    /** An in-memory store whose appends fail while `outage.on`. */
    function failingStore() {
      const store = new InMemoryRunStore();
      const outage = { on: false, refused: 0 };
      const append = store.append.bind(store);
      store.append = (runId, item, options) => {
        if (!outage.on) return append(runId, item, options);
        outage.refused++;
        return Promise.reject(new Error('down'));
      };
      return { store, outage };
    }

    it.each([
      ['completes', (invocation: ScriptedInvocation) => invocation.complete(), { status: 'completed' }],
      ['pauses', (invocation: ScriptedInvocation) => invocation.pause(['call-1']), { status: 'paused', pending_call_ids: ['call-1'] }],
      ['fails', (invocation: ScriptedInvocation) => invocation.fail(new RunnerError('model_failed')), { status: 'failed', error: { code: 'model_failed' } }],
    ])('an invocation that %s while the store fails: the write is repeated (250 ms doubling) until it lands', async (_name, finish, expected) => {
      const { store, outage } = failingStore();
      const t = setup({ store });
      const { run_id, invocation } = await t.start();
      invocation.admit('inv-1');
      await flush();
      outage.on = true;
      finish(invocation);
      await flush();
      expect(outage.refused).toBe(1);
      expect(t.registry.status().active).toBe(1);
      for (const pause of [250, 500, 1000, 2000, 4000, 5000]) {
        t.clock.advance(pause - 1);
        await flush();
        const before = outage.refused;
        t.clock.advance(1);
        await flush();
        expect(outage.refused).toBe(before + 1);
      }
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'running' });
      outage.on = false;
      t.clock.advance(5000);
      await flush();
      expect(await t.registry.get(run_id)).toMatchObject(expected);
      expect(t.registry.status().active).toBe(0);
    });
  });

  describe('shutdown and readiness', () => {
    it('on a store whose runs survive a restart: cancels executing runs with reason shutdown, keeps paused runs, and stops taking runs', async () => {
      const store = Object.assign(new InMemoryRunStore(), { survivesRestart: true });
      const t = setup({ store });
      const running = await t.start();
      running.invocation.admit();
      const paused = await pausedRun(t);
      expect(t.registry.status()).toEqual({ accepting: true, active: 1 });
      await t.registry.shutdown();
      expect(t.registry.isAcceptingRuns()).toBe(false);
      expect(t.registry.status()).toEqual({ accepting: false, active: 0 });
      expect(await t.registry.get(running.run_id)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'shutdown' } } });
      expect(await t.registry.get(paused.run_id)).toMatchObject({ status: 'paused' });
      expect(t.runner.discarded).toEqual([]);
      expect(running.invocation.closed).toBe(true);
      const draining = { code: 'admission_failed', details: { reason: 'deployment_draining' } };
      expect(await failure(t.registry.start({ agent: 'assistant', userId: 'u', message: 'hi' }))).toEqual(draining);
      expect(await failure(t.registry.confirm(paused.run_id, 'call-1', { confirmed: true }))).toEqual(draining);
      expect(t.registry.shutdown()).toBe(t.registry.shutdown());
    });

    it('an invocation that paused before the shutdown keeps its pause while the pause is still being written', async () => {
      const store = Object.assign(new InMemoryRunStore(), { survivesRestart: true });
      const append = store.append.bind(store);
      let release!: () => void;
      const writing = new Promise<void>((resolve) => (release = resolve));
      store.append = async (runId, item, options) => {
        if (item.type === 'paused') await writing;
        return append(runId, item, options);
      };
      const t = setup({ store });
      const { run_id, invocation } = await t.start();
      invocation.admit('inv-1').pause(['call-1']);
      await flush();
      expect(t.registry.status().active).toBe(1);
      const shutdown = t.registry.shutdown();
      await flush();
      release();
      await shutdown;
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'paused', pending_call_ids: ['call-1'], error: null });
      expect(t.registry.status().active).toBe(0);
    });

    it('on the in-memory store, which a restart empties: cancels the paused runs too (reason shutdown) and discards their continuations', async () => {
      const t = setup();
      const paused = await pausedRun(t);
      await t.registry.shutdown();
      expect(await t.registry.get(paused.run_id)).toMatchObject({ status: 'cancelled', pending_call_ids: [], error: { code: 'cancelled', details: { reason: 'shutdown' } } });
      expect(t.runner.discarded).toEqual([{ userId: 'user-1', sessionId: paused.session_id, invocationId: 'inv-1' }]);
    });

    it('a shutdown whose cancel cannot be written still aborts the invocation, and its ending is written once the store answers', async () => {
      const store = new InMemoryRunStore();
      const t = setup({ store, shutdownGraceMs: 60_000 });
      const { run_id, invocation } = await t.start();
      invocation.admit('inv-1');
      await flush();
      const get = store.get.bind(store);
      const append = store.append.bind(store);
      let outage = true;
      store.get = (runId) => (outage ? Promise.reject(new Error('down')) : get(runId));
      store.append = (runId, item, options) => (outage ? Promise.reject(new Error('down')) : append(runId, item, options));
      const shutdown = t.registry.shutdown();
      await flush();
      expect(invocation.closed).toBe(true);
      // the driver's ending failed once and waits 250 ms; then 500 ms
      t.clock.advance(250);
      await flush();
      outage = false;
      t.clock.advance(500);
      await flush();
      await shutdown;
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'shutdown' } } });
    });

    it('waits for an invocation that does not stop only up to shutdownGraceMs', async () => {
      const t = setup({ shutdownGraceMs: 500 });
      const { run_id, invocation } = await t.start();
      invocation.ignoreAbort = true;
      invocation.admit();
      let done = false;
      const shutdown = t.registry.shutdown().then(() => (done = true));
      await flush();
      expect(done).toBe(false);
      expect(await t.registry.get(run_id)).toMatchObject({ status: 'cancelled' });
      t.clock.advance(499);
      await flush();
      expect(done).toBe(false);
      t.clock.advance(1);
      await shutdown;
      expect(done).toBe(true);
    });
  });

  it('the resume request carries no payload key when none was given', async () => {
    const t = setup();
    const { run_id } = await pausedRun(t);
    await t.registry.confirm(run_id, 'call-1', { confirmed: false });
    await flush();
    expect('payload' in (t.runner.last.request as ResumeRequest)).toBe(false);
  });

  it('uses the given store', async () => {
    const store = new InMemoryRunStore();
    const t = setup({ store });
    const { run_id } = await t.start();
    expect(await store.get(run_id)).toMatchObject({ run_id, user_id: 'user-1', durable: false });
  });

  it('records are plain JSON', async () => {
    const t = setup();
    const { run_id } = await pausedRun(t);
    const record: RunStatusRecord = await t.registry.get(run_id);
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
  });
});

// keeps the type import used when the double's type is only referenced in helpers
export type { ScriptedInvocation };
