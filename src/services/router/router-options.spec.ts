import { RuntimeServiceError } from '../runtime-service.errors';
import { readCallOptions, resolveRouterSettings, type ScopeRouterSettings } from './router-options';

const base: ScopeRouterSettings<unknown> = {
  kind: 'artifact',
  routing: 'exact_scope',
  durable: true,
  adapterId: 'postgres_artifact',
  maxActiveScopes: 1024,
  maxRouterQueue: 256,
  idleScopeTimeoutMs: 60_000,
  callTimeoutMs: 30_000,
  checkScope: (scope) => scope,
  keyOf: () => 'k',
  openScope: () => Promise.resolve(),
  adapterFailure: 'artifact_shard_adapter_failed',
};

describe('resolveRouterSettings', () => {
  it('derives the effective capacity and the reclamation mode', () => {
    expect(resolveRouterSettings(base)).toMatchObject({ capacity: 1024, idleReclamation: 'lru_on_capacity' });
    expect(resolveRouterSettings({ ...base, durable: false })).toMatchObject({ capacity: 1024, idleReclamation: 'disabled_for_volatile_adapter' });
    expect(resolveRouterSettings({ ...base, routing: 'shared' })).toMatchObject({ capacity: 1, idleReclamation: 'not_required_shared_adapter' });
  });

  it('names the offending setting', () => {
    const reason = (patch: object) => {
      try {
        resolveRouterSettings({ ...base, ...patch } as ScopeRouterSettings<unknown>);
        return 'accepted';
      } catch (error) {
        expect(error).toBeInstanceOf(RuntimeServiceError);
        return (error as RuntimeServiceError).details;
      }
    };
    expect(reason({ durable: 'yes' })).toEqual({ kind: 'artifact', reason: 'component_config', field: 'durable' });
    expect(reason({ adapterId: '' })).toEqual({ kind: 'artifact', reason: 'component_config', field: 'adapterId' });
    expect(reason({ clock: 5 })).toEqual({ kind: 'artifact', reason: 'component_config', field: 'clock' });
    expect(reason({ onChildDown: 'x' })).toEqual({ kind: 'artifact', reason: 'component_config', field: 'onChildDown' });
    expect(reason({ kind: undefined })).toEqual({ reason: 'component_config', field: 'kind' });
    expect(reason({ kind: 'session', durable: 'yes' })).toEqual({ reason: 'component_config', field: 'kind' });
    expect(reason({ routing: undefined, openScope: undefined })).toEqual({ kind: 'artifact', reason: 'component_config', fields: ['openScope', 'routing'] });
    expect(reason({ maxRouterQueue: 0, durable: 'yes' })).toEqual({ kind: 'artifact', reason: 'component_config', fields: ['durable', 'maxRouterQueue'] });
  });
});

describe('readCallOptions', () => {
  const defaults = { signal: undefined, timeoutMs: 5000 };

  it('reads signal and timeoutMs, ignores other keys, falls back to the defaults', () => {
    const controller = new AbortController();
    expect(readCallOptions(undefined, defaults)).toEqual(defaults);
    expect(readCallOptions({ timeoutMs: 0, extra: true }, defaults)).toEqual({ signal: undefined, timeoutMs: 0 });
    expect(readCallOptions({ signal: controller.signal }, defaults).signal).toBe(controller.signal);
    expect(readCallOptions({}, { signal: controller.signal, timeoutMs: 1 }).signal).toBe(controller.signal);
  });

  it('refuses what it cannot trust without running a getter', () => {
    const getter = jest.fn(() => 5);
    const hostile = Object.defineProperty({}, 'timeoutMs', { get: getter, enumerable: true });
    const refused = (value: unknown) => {
      try {
        readCallOptions(value, defaults);
        return 'accepted';
      } catch (error) {
        expect((error as RuntimeServiceError).code).toBe('scope_route_caller_unavailable');
        return (error as RuntimeServiceError).details;
      }
    };
    expect(refused(hostile)).toEqual({ reason: 'invalid_call_options', field: 'timeoutMs' });
    expect(getter).not.toHaveBeenCalled();
    expect(refused({ timeoutMs: 1.5 })).toEqual({ reason: 'invalid_call_options', field: 'timeoutMs' });
    expect(refused({ timeoutMs: 2 ** 31 })).toEqual({ reason: 'invalid_call_options', field: 'timeoutMs' });
    expect(refused({ signal: Object.create(AbortSignal.prototype) })).toEqual({ reason: 'invalid_call_options', field: 'signal' });
    expect(refused(null)).toEqual({ reason: 'invalid_call_options', field: 'options' });
    expect(refused(new Proxy({}, {}))).toEqual({ reason: 'invalid_call_options', field: 'options' });
  });
});
