import type { NewSessionEvent, SessionRef, SessionService } from '../../../runner/session.types';

/** What the cases call: the service under test, the suite's app, its event builder and a ref of a session that need not exist. */
export interface SessionArgumentContext {
  readonly service: () => SessionService;
  readonly appName: () => string;
  readonly event: (overrides?: Partial<NewSessionEvent>) => NewSessionEvent;
  readonly ref: () => SessionRef;
}

/** Content with U+0000, which no error may echo. */
export const CONTENT_WITH_NUL = { text: 'a\u0000b' };

/**
 * Bad arguments of every `SessionService` method (spec 03 §4): a label, the call, and the details of the
 * `invalid_run_request` it must fail with.
 */
export function badSessionArguments({ service, appName, event, ref }: SessionArgumentContext): Array<[string, () => Promise<unknown>, Record<string, unknown>]> {
  const withNul = CONTENT_WITH_NUL;
  return [
    ['a missing ref', () => service().getSession(undefined as unknown as SessionRef), { field: 'ref' }],
    ['a ref that is not a plain object', () => service().getSession(new Map() as unknown as SessionRef), { field: 'ref' }],
    ['an empty appName', () => service().getSession({ ...ref(), appName: '' }), { field: 'appName' }],
    ['an appName of 129 characters', () => service().getSession({ ...ref(), appName: 'a'.repeat(129) }), { field: 'appName' }],
    ['a userId with a control character', () => service().getSession({ ...ref(), userId: 'u\n1' }), { field: 'userId' }],
    ['a sessionId outside the pattern', () => service().getSession({ ...ref(), sessionId: 'a/b' }), { field: 'sessionId' }],
    ['a sessionId of 129 characters', () => service().deleteSession({ ...ref(), sessionId: 's'.repeat(129) }), { field: 'sessionId' }],
    ['a missing sessionId', () => service().getSession({ appName: appName(), userId: 'u1' } as SessionRef), { field: 'sessionId' }],
    ['a sessionId held by a getter', () => service().getSession(Object.defineProperty({ appName: appName(), userId: 'u1' }, 'sessionId', { get: () => 'x', enumerable: true }) as SessionRef), { field: 'sessionId' }],
    ['several bad fields at once', () => service().getSession({ appName: 1, userId: '', sessionId: 'ok' } as unknown as SessionRef), { fields: ['appName', 'userId'] }],
    ['a bad sessionId to create', () => service().createSession({ appName: appName(), userId: 'u1', sessionId: 'white space' }), { field: 'sessionId' }],
    ['a state that is an array', () => service().createSession({ appName: appName(), userId: 'u1', state: [] as never }), { field: 'state' }],
    ['a state holding a function', () => service().createSession({ appName: appName(), userId: 'u1', state: { f: (() => 1) as never } }), { field: 'state' }],
    ['an unknown key of createSession', () => service().createSession({ appName: appName(), userId: 'u1', sesionId: 'x' } as never), { field: 'sesionId' }],
    ['a negative limit', () => service().listSessions({ appName: appName(), userId: 'u1', limit: -1 }), { field: 'limit' }],
    ['a fractional offset', () => service().listSessions({ appName: appName(), userId: 'u1', offset: 1.5 }), { field: 'offset' }],
    ['a listing without userId', () => service().listSessions({ appName: appName() } as never), { field: 'userId' }],
    ['an event without kind', () => service().appendEvent(ref(), { ...event(), kind: undefined as never }), { field: 'kind' }],
    ['an unknown kind', () => service().appendEvent(ref(), event({ kind: 'chat' as never })), { field: 'kind' }],
    ['an empty event_id', () => service().appendEvent(ref(), event({ event_id: '' })), { field: 'event_id' }],
    ['an invocation_id that is not a string', () => service().appendEvent(ref(), event({ invocation_id: 7 as never })), { field: 'invocation_id' }],
    ['an author with a NUL', () => service().appendEvent(ref(), event({ author: 'a\u0000' })), { field: 'author' }],
    ['content holding a bigint', () => service().appendEvent(ref(), event({ content: { n: 1n } as never })), { field: 'content' }],
    ['content holding a symbol', () => service().appendEvent(ref(), event({ content: { n: Symbol('s') } as never })), { field: 'content' }],
    ['content holding a class instance', () => service().appendEvent(ref(), event({ content: { at: new Date(0) } as never })), { field: 'content' }],
    ['content that is undefined', () => service().appendEvent(ref(), event({ content: undefined as never })), { field: 'content' }],
    ['content holding NaN', () => service().appendEvent(ref(), event({ content: [Number.NaN] })), { field: 'content' }],
    ['content holding U+0000', () => service().appendEvent(ref(), event({ content: withNul })), { field: 'content' }],
    ['content holding a lone surrogate', () => service().appendEvent(ref(), event({ content: '\ud800' })), { field: 'content' }],
    ['actions that are an array', () => service().appendEvent(ref(), event({ actions: [] as never })), { field: 'actions' }],
    ['actions that are null', () => service().appendEvent(ref(), event({ actions: null as never })), { field: 'actions' }],
    ['a store-assigned seq in the event', () => service().appendEvent(ref(), { ...event(), seq: 4 } as NewSessionEvent), { field: 'seq' }],
    ['an event that is not an object', () => service().appendEvent(ref(), 'event' as never), { field: 'event' }],
    ['a negative afterSeq', () => service().listEvents(ref(), { afterSeq: -1 }), { field: 'afterSeq' }],
    ['a limit that is a string', () => service().listEvents(ref(), { limit: '2' as never }), { field: 'limit' }],
    ['an unknown listEvents option', () => service().listEvents(ref(), { after: 1 } as never), { field: 'after' }],
    ['a delta that is not an object', () => service().updateState(ref(), [1] as never), { field: 'delta' }],
    ['a delta holding U+0000 in a key', () => service().updateState(ref(), { 'k\u0000': 1 }), { field: 'delta' }],
    ['a fractional expectedVersion', () => service().updateState(ref(), {}, { expectedVersion: 0.5 }), { field: 'expectedVersion' }],
  ];
}
