import { randomId } from '../../../shared/ids/random-id';
import { RunnerError, type RunnerErrorCode } from '../../../runner/runner.errors';
import { TOKEN_ID_PATTERN } from '../../../shared/ids/id-rule';
import { type NewSessionEvent, type SessionRef, type SessionService } from '../../../runner/session.types';
import { ManualClock } from '../../../shared/time/manual-clock';
import { badSessionArguments } from './session-argument-cases';

/** Builds the service under test on `clock` (its `wallNow()` gives the record timestamps). */
export type SessionServiceFactory = (clock: ManualClock) => Promise<SessionService>;

/** The rejection of `promise`, checked to be a `RunnerError` with `code` (and `details` when given; `{}` matches none). */
export async function runnerError(promise: Promise<unknown>, code: RunnerErrorCode, details?: Record<string, unknown>): Promise<RunnerError> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  if (!RunnerError.isRunnerError(error)) throw new Error(`expected RunnerError ${code}, got ${error === undefined ? 'success' : String(error)}`);
  // `{}` in the spec's error table is a RunnerError without details
  expect({ code: error.code, details: error.details ?? {} }).toEqual({ code, details: details ?? error.details ?? {} });
  return error;
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

/** How the contract names what it creates. */
export interface SessionContractOptions {
  /** Every app name the suite uses starts with this, so a durable store can remove them afterwards. @default 'app' */
  readonly appPrefix?: string;
}

/**
 * The behaviour every {@link SessionService} shares (spec 03 §4), run against `makeService`. Each
 * test works in an app of its own and mints its own ids, so the suite can share a database with
 * other suites and with itself.
 */
export function describeSessionServiceContract(name: string, makeService: SessionServiceFactory, options: SessionContractOptions = {}): void {
  describe(`${name}: the SessionService contract (spec 03 §4)`, () => {
    let clock: ManualClock;
    let service: SessionService;
    let appName: string;
    let seq = 0;
    const sessionId = () => `sid-${randomId('')}`;
    const eventId = () => randomId('evt-');
    const event = (overrides: Partial<NewSessionEvent> = {}): NewSessionEvent => ({
      event_id: eventId(),
      invocation_id: 'inv-1',
      author: 'user',
      kind: 'user_message',
      content: { role: 'user', parts: [{ text: `message ${++seq}` }] },
      ...overrides,
    });
    const create = async (userId = 'u1', extra: { sessionId?: string; state?: Record<string, never> | object } = {}) => {
      const record = await service.createSession({ appName, userId, ...(extra as object) });
      return { record, ref: { appName, userId, sessionId: record.session_id } satisfies SessionRef };
    };

    beforeEach(async () => {
      clock = new ManualClock();
      service = await makeService(clock);
      appName = `${options.appPrefix ?? 'app'}-${randomId('')}`;
    });

    describe('createSession and getSession', () => {
      it('creates a session with a generated id fitting the session id pattern, empty state, version and seq 0, both timestamps from the clock', async () => {
        const { record, ref } = await create();
        expect(record.session_id).toMatch(/^ses-[A-Za-z0-9_-]{24}$/);
        expect(record.session_id).toMatch(TOKEN_ID_PATTERN);
        expect(record).toEqual({
          session_id: record.session_id,
          app_name: appName,
          user_id: 'u1',
          state: {},
          state_version: 0,
          last_seq: 0,
          created_at_ms: clock.wallNow(),
          updated_at_ms: clock.wallNow(),
        });
        expect(await service.getSession(ref)).toEqual(record);
      });

      it('keeps a given session id and initial state', async () => {
        const id = sessionId();
        const { record, ref } = await create('u1', { sessionId: id, state: { topic: 'billing', nested: { n: [1, 2] } } });
        expect(record).toMatchObject({ session_id: id, state: { topic: 'billing', nested: { n: [1, 2] } } });
        expect((await service.getSession(ref))?.state).toEqual({ topic: 'billing', nested: { n: [1, 2] } });
      });

      it('refuses an id that is taken, by any app or user, with session_state_conflict and keeps the first session', async () => {
        const id = sessionId();
        const { ref } = await create('u1', { sessionId: id, state: { first: true } });
        await runnerError(service.createSession({ appName, userId: 'u1', sessionId: id }), 'session_state_conflict', undefined);
        await runnerError(service.createSession({ appName: `${appName}-other`, userId: 'u2', sessionId: id }), 'session_state_conflict');
        expect((await service.getSession(ref))?.state).toEqual({ first: true });
      });

      it('answers undefined for an absent session and for a session of another user or app', async () => {
        const { ref } = await create('u1');
        expect(await service.getSession({ ...ref, sessionId: sessionId() })).toBeUndefined();
        expect(await service.getSession({ ...ref, userId: 'u2' })).toBeUndefined();
        expect(await service.getSession({ ...ref, appName: `${appName}-other` })).toBeUndefined();
      });
    });

    describe('listSessions', () => {
      it("lists only the user's sessions of the app, newest update first, ties by session id", async () => {
        const ids = ['sid-b', 'sid-a', 'sid-c'].map((id) => `${id}-${randomId('')}`);
        const b = await create('u1', { sessionId: ids[0] });
        clock.advance(10);
        const a = await create('u1', { sessionId: ids[1] });
        const c = await create('u1', { sessionId: ids[2] });
        await create('u2');
        await service.createSession({ appName: `${appName}-other`, userId: 'u1' });
        const tied = [a.record.session_id, c.record.session_id].sort();
        expect((await service.listSessions({ appName, userId: 'u1' })).map((s) => s.session_id)).toEqual([...tied, b.record.session_id]);
        clock.advance(10);
        await service.appendEvent(b.ref, event());
        expect((await service.listSessions({ appName, userId: 'u1' })).map((s) => s.session_id)).toEqual([b.record.session_id, ...tied]);
        expect(await service.listSessions({ appName, userId: 'nobody' })).toEqual([]);
      });

      it('pages with limit and offset', async () => {
        const made: string[] = [];
        for (let i = 0; i < 5; i++) {
          made.unshift((await create('u1')).record.session_id);
          clock.advance(1);
        }
        const page = (limit?: number, offset?: number) =>
          service.listSessions({ appName, userId: 'u1', ...(limit === undefined ? {} : { limit }), ...(offset === undefined ? {} : { offset }) });
        expect((await page(2)).map((s) => s.session_id)).toEqual(made.slice(0, 2));
        expect((await page(2, 2)).map((s) => s.session_id)).toEqual(made.slice(2, 4));
        expect((await page(undefined, 3)).map((s) => s.session_id)).toEqual(made.slice(3));
        expect(await page(0)).toEqual([]);
        expect(await page(2, 10)).toEqual([]);
      });
    });

    describe('deleteSession', () => {
      it('removes the session with its events: true once, then false; the id and the event ids can be used again', async () => {
        const id = sessionId();
        const { ref } = await create('u1', { sessionId: id });
        const written = await service.appendEvent(ref, event());
        expect(await service.deleteSession(ref)).toBe(true);
        expect(await service.deleteSession(ref)).toBe(false);
        expect(await service.getSession(ref)).toBeUndefined();
        await runnerError(service.listEvents(ref), 'session_not_found', {});
        await create('u1', { sessionId: id });
        expect(await service.listEvents(ref)).toEqual([]);
        expect((await service.appendEvent(ref, event({ event_id: written.event_id }))).seq).toBe(1);
      });

      it("does not delete another user's session", async () => {
        const { ref } = await create('u1');
        expect(await service.deleteSession({ ...ref, userId: 'u2' })).toBe(false);
        expect(await service.getSession(ref)).toBeDefined();
      });
    });

    describe('appendEvent', () => {
      it('assigns seq 1, 2, 3 and created_at_ms from the clock, and moves last_seq and updated_at_ms', async () => {
        const { ref, record } = await create();
        const first = event({ actions: { runtime_policy_decision: { outcome: 'deny' } } });
        clock.advance(5);
        const stored = await service.appendEvent(ref, first);
        expect(stored).toEqual({ ...first, session_id: record.session_id, seq: 1, created_at_ms: clock.wallNow() });
        expect((await service.appendEvent(ref, event({ kind: 'model_turn', author: 'helper', content: { tool_calls: [] } }))).seq).toBe(2);
        clock.advance(5);
        const third = await service.appendEvent(ref, event({ kind: 'final_output', content: null }));
        expect(third.seq).toBe(3);
        expect(third.content).toBeNull();
        expect(third).not.toHaveProperty('actions');
        expect(await service.getSession(ref)).toMatchObject({ last_seq: 3, created_at_ms: record.created_at_ms, updated_at_ms: clock.wallNow() });
      });

      it('fails with session_not_found for an absent session or one of another user, storing nothing', async () => {
        const { ref } = await create('u1');
        await runnerError(service.appendEvent({ ...ref, sessionId: sessionId() }, event()), 'session_not_found', {});
        await runnerError(service.appendEvent({ ...ref, userId: 'u2' }, event()), 'session_not_found', {});
        expect(await service.listEvents(ref)).toEqual([]);
        expect((await service.getSession(ref))?.last_seq).toBe(0);
      });

      it('refuses an event id stored already (in any session) with session_state_conflict, consuming no seq', async () => {
        const one = await create('u1');
        const two = await create('u1');
        const stored = await service.appendEvent(one.ref, event());
        await runnerError(service.appendEvent(one.ref, event({ event_id: stored.event_id })), 'session_state_conflict');
        await runnerError(service.appendEvent(two.ref, event({ event_id: stored.event_id })), 'session_state_conflict');
        expect((await service.appendEvent(one.ref, event())).seq).toBe(2);
        expect((await service.appendEvent(two.ref, event())).seq).toBe(1);
      });
    });

    describe('listEvents', () => {
      it('lists in seq order, after afterSeq, at most limit', async () => {
        const { ref } = await create();
        const stored = [];
        for (let i = 0; i < 5; i++) stored.push(await service.appendEvent(ref, event()));
        expect(await service.listEvents(ref)).toEqual(stored);
        expect(await service.listEvents(ref, { afterSeq: 2 })).toEqual(stored.slice(2));
        expect(await service.listEvents(ref, { limit: 2 })).toEqual(stored.slice(0, 2));
        expect(await service.listEvents(ref, { afterSeq: 1, limit: 3 })).toEqual(stored.slice(1, 4));
        expect(await service.listEvents(ref, { afterSeq: 5 })).toEqual([]);
        expect(await service.listEvents(ref, { limit: 0 })).toEqual([]);
      });

      it('fails with session_not_found for an absent session or one of another user', async () => {
        const { ref } = await create('u1');
        await service.appendEvent(ref, event());
        await runnerError(service.listEvents({ ...ref, sessionId: sessionId() }), 'session_not_found', {});
        await runnerError(service.listEvents({ ...ref, userId: 'u2' }), 'session_not_found', {});
      });
    });

    describe('updateState', () => {
      it('merges shallowly, deletes keys given null, increments state_version and moves updated_at_ms', async () => {
        const { ref } = await create('u1', { state: { keep: 1, drop: 'x', replace: { a: 1 } } });
        clock.advance(7);
        const updated = await service.updateState(ref, { drop: null, replace: { b: 2 }, added: [true], absent: null });
        expect(updated.state).toEqual({ keep: 1, replace: { b: 2 }, added: [true] });
        expect(updated).toMatchObject({ state_version: 1, updated_at_ms: clock.wallNow() });
        expect((await service.updateState(ref, {})).state_version).toBe(2);
        expect(await service.getSession(ref)).toEqual({ ...updated, state_version: 2 });
      });

      it('keeps "__proto__" an ordinary key of the state', async () => {
        const { ref } = await create();
        const delta = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, never>;
        const updated = await service.updateState(ref, delta);
        expect(Object.getOwnPropertyNames(updated.state)).toEqual(['__proto__']);
        expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
        expect((await service.getSession(ref))?.state).toHaveProperty(['__proto__', 'polluted'], true);
      });

      it('applies the delta only at the expected version; a mismatch is session_state_conflict and changes nothing', async () => {
        const { ref } = await create('u1', { state: { n: 0 } });
        expect((await service.updateState(ref, { n: 1 }, { expectedVersion: 0 })).state).toEqual({ n: 1 });
        await runnerError(service.updateState(ref, { n: 2 }, { expectedVersion: 0 }), 'session_state_conflict', {});
        expect(await service.getSession(ref)).toMatchObject({ state: { n: 1 }, state_version: 1 });
        expect((await service.updateState(ref, { n: 2 }, { expectedVersion: 1 })).state_version).toBe(2);
      });

      it('fails with session_not_found for an absent session or one of another user', async () => {
        const { ref } = await create('u1');
        await runnerError(service.updateState({ ...ref, sessionId: sessionId() }, { a: 1 }), 'session_not_found', {});
        await runnerError(service.updateState({ ...ref, userId: 'u2' }, { a: 1 }), 'session_not_found', {});
        expect((await service.getSession(ref))?.state_version).toBe(0);
      });
    });

    describe('stored records are deep-frozen copies', () => {
      it('returns deep-frozen sessions, events and lists, unchanged by later edits of the inputs', async () => {
        const state = { nested: { list: [1, { deep: 'yes' }] } };
        const { ref, record } = await create('u1', { state });
        const content = { role: 'user', parts: [{ data: { k: [1, 2] } }] };
        const actions = { plugin: { mark: [true] } };
        const stored = await service.appendEvent(ref, event({ content, actions }));
        state.nested.list.push(3);
        content.parts.push({ data: { k: [3] } });
        actions.plugin.mark.push(false);
        const lists = [await service.listSessions({ appName, userId: 'u1' }), await service.listEvents(ref)];
        for (const value of [record, stored, await service.getSession(ref), await service.updateState(ref, { more: { x: [1] } }), ...lists]) {
          expect(isDeepFrozen(value)).toBe(true);
        }
        expect((await service.getSession(ref))?.state).toEqual({ nested: { list: [1, { deep: 'yes' }] }, more: { x: [1] } });
        expect((await service.listEvents(ref))[0]).toMatchObject({ content: { role: 'user', parts: [{ data: { k: [1, 2] } }] }, actions: { plugin: { mark: [true] } } });
      });
    });

    describe('bad arguments are invalid_run_request naming the argument, and the service keeps serving', () => {
      const ref = (): SessionRef => ({ appName, userId: 'u1', sessionId: 'sid-x' });
      const cases = badSessionArguments({ service: () => service, appName: () => appName, event, ref });

      it.each(cases)('%s', async (_label, call, details) => {
        const error = await runnerError(call(), 'invalid_run_request', details);
        expect(error.message).not.toContain('a\u0000b');
        const { ref: live } = await create();
        expect((await service.appendEvent(live, event())).seq).toBe(1);
      });

      it('checks arguments before looking the session up', async () => {
        await runnerError(service.appendEvent({ ...ref(), sessionId: sessionId() }, event({ kind: 'chat' as never })), 'invalid_run_request', { field: 'kind' });
      });

      it('never copies content into an error', async () => {
        const secret = 'secret-payload-7f3a';
        const error = await runnerError(service.appendEvent(ref(), event({ content: { [secret]: () => secret } as never })), 'invalid_run_request');
        expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain(secret);
      });
    });
  });
}
