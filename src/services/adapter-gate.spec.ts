import { AdapterGate } from './adapter-gate';

describe('AdapterGate', () => {
  it('runs work, refuses it after close, and close waits for what was in flight', async () => {
    const gate = new AdapterGate(() => new Error('closed'));
    let release!: () => void;
    const slow = gate.run(() => new Promise<string>((resolve) => (release = () => resolve('done'))));
    let closed = false;
    const closing = gate.close().then(() => (closed = true));
    await expect(gate.run(async () => 'late')).rejects.toThrow('closed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    await expect(slow).resolves.toBe('done');
    await closing;
    expect(closed).toBe(true);
    expect(gate.isClosed).toBe(true);
  });

  it('a failing operation rejects its caller and does not fail close', async () => {
    const gate = new AdapterGate(() => new Error('closed'));
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.close()).resolves.toBeUndefined();
  });
});
