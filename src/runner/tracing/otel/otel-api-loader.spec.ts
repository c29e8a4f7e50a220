import * as api from '@opentelemetry/api';
import { createOtelApiLoader, loadOtelApi } from './otel-api-loader';

describe('createOtelApiLoader', () => {
  it('a failing require gives null, looked for once', () => {
    const load = jest.fn(() => {
      throw new Error("Cannot find module '@opentelemetry/api'");
    });
    const loader = createOtelApiLoader(load);
    expect(loader()).toBeNull();
    expect(loader()).toBeNull();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('a module that is not the API gives null', () => {
    expect(createOtelApiLoader(() => ({ trace: {} }))()).toBeNull();
    expect(createOtelApiLoader(() => undefined)()).toBeNull();
  });

  it('the installed API is loaded once and cached', () => {
    const load = jest.fn(() => api);
    const loader = createOtelApiLoader(load);
    expect(loader()).toBe(api);
    expect(loader()).toBe(api);
    expect(load).toHaveBeenCalledTimes(1);
    expect(loadOtelApi()?.trace).toBe(api.trace);
  });
});
