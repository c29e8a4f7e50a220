import type { Agent, RunnerPlugin, Toolset } from '../../src/runner/agent.types';
import type { Model, ModelResponse } from '../../src/runner/models/model.types';
import type { SessionService } from '../../src/runner/session.types';
import { AGENT } from '../../src/runner/testing/runner-harness';
import { ScriptedModel } from '../../src/runner/models/scripted-model';
import { systemClock, type Clock } from '../../src/shared/time/clock';

/** The settle bound of an ended invocation (issue 23 item 3): 100 ms plus the system clock's resolution. */
export const SETTLE_BOUND_MS = 100 + 16;

/** The code of the one log line about discarded late results. */
export const LATE_LOG_CODE = 'user_code_late_result';

/** A piece of user code that never returns (its signal ignored) until the test finishes it. */
export interface Hang {
  /** Resolves once the hung code was called. */
  readonly started: Promise<void>;
  /** Settles the hung code late, with `value` (which must then appear nowhere). */
  finish(value: string): void;
}

/** What one test runs: an agent, its plugins and its session service, one of them hanging. */
export interface Armed {
  readonly hang: Hang;
  readonly agent: Agent;
  readonly plugins: RunnerPlugin[];
  sessionService<S extends SessionService>(base: S): S;
}

/** One place the Runner awaits user code; `arm()` builds a fresh hanging set-up per test. */
export interface HungSite {
  readonly name: string;
  /** The `site=` the late-result log line names. */
  readonly logSite: string;
  arm(): Armed;
}

function hang<T>(): Hang & { readonly call: () => Promise<T> } {
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const waiting: Array<(value: string) => void> = [];
  return {
    started: startedPromise,
    finish: (value) => waiting.splice(0).forEach((resolve) => resolve(value)),
    call: () => {
      started();
      return new Promise<T>((resolve) => waiting.push((value) => resolve(value as unknown as T)));
    },
  };
}

const TOOL_TURN = { toolCalls: [{ id: 'c1', name: 'act', args: {} }] };
const act = { name: 'act', execute: () => ({ ok: true }) };

function armed(hung: Hang, agent: Partial<Agent>, plugins: RunnerPlugin[] = [], sessionService = <S extends SessionService>(base: S) => base): Armed {
  return { hang: hung, agent: { name: AGENT, model: new ScriptedModel([TOOL_TURN, { text: 'done' }]), tools: [act], ...agent } as Agent, plugins, sessionService };
}

/** The acceptance sites: a plugin hook, an agent callback, toolset resolution, a session call, the model. */
export function hungSites(): HungSite[] {
  return [
    {
      name: 'plugin beforeRunCallback',
      logSite: 'before_run',
      arm() {
        const hung = hang<undefined>();
        return armed(hung, {}, [{ name: 'stuck', beforeRunCallback: hung.call } as RunnerPlugin]);
      },
    },
    {
      name: 'agent beforeToolCallback',
      logSite: 'before_tool',
      arm() {
        const hung = hang<undefined>();
        return armed(hung, { beforeToolCallback: hung.call } as Partial<Agent>);
      },
    },
    {
      name: 'toolset resolution (listToolNames)',
      logSite: 'toolset.list_tool_names',
      arm() {
        const hung = hang<readonly string[]>();
        const toolset: Toolset = { name: 'remote', listToolNames: hung.call, materialize: () => act };
        return armed(hung, { tools: [toolset] });
      },
    },
    {
      name: 'session service call (getSession)',
      logSite: 'session.get_session',
      arm() {
        const hung = hang<undefined>();
        return armed(hung, {}, [], <S extends SessionService>(base: S) => {
          const wrapped = Object.create(base) as S;
          (wrapped as SessionService).getSession = hung.call;
          return wrapped;
        });
      },
    },
    {
      name: 'model (generate ignores its signal)',
      logSite: 'model.generate',
      arm() {
        const hung = hang<ModelResponse>();
        const model: Model = { name: 'stuck', generate: hung.call };
        return armed(hung, { model });
      },
    },
  ];
}

/**
 * The system clock, noting when a timer of `timeoutMs` fires: the settle bound of a run timeout is
 * measured from the moment the timeout ended the invocation, not from a start a loaded machine delays.
 */
export function timeoutWatchClock(timeoutMs: number): Clock & { readonly firedAt: () => number | undefined } {
  let firedAt: number | undefined;
  return {
    monotonicNow: () => systemClock.monotonicNow(),
    wallNow: () => systemClock.wallNow(),
    setTimer: (fn, ms) =>
      systemClock.setTimer(() => {
        if (ms === timeoutMs) firedAt ??= performance.now();
        fn();
      }, ms),
    clearTimer: (handle) => systemClock.clearTimer(handle),
    firedAt: () => firedAt,
  };
}
