import { untilAborted } from './abortable';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('untilAborted', () => {
  it('settles like the work while the signal is not aborted, and reports nothing late', async () => {
    const onLate = jest.fn();
    const controller = new AbortController();
    await expect(untilAborted(Promise.resolve(7), controller.signal, onLate)).resolves.toBe(7);
    const failure = new Error('x');
    await expect(untilAborted(Promise.reject(failure), controller.signal, onLate)).rejects.toBe(failure);
    controller.abort('cancelled');
    await tick();
    expect(onLate).not.toHaveBeenCalled();
  });

  it('rejects with the reason at the abort although the work never settles', async () => {
    const controller = new AbortController();
    const raced = untilAborted(new Promise<never>(() => undefined), controller.signal);
    controller.abort('cancelled');
    await expect(raced).rejects.toBe('cancelled');
  });

  it('rejects at once on an aborted signal', async () => {
    await expect(untilAborted(new Promise<never>(() => undefined), AbortSignal.abort('timeout'))).rejects.toBe('timeout');
  });

  it('discards a late result and reports it once with its outcome, never its value', async () => {
    for (const outcome of ['resolved', 'rejected'] as const) {
      const onLate = jest.fn();
      const controller = new AbortController();
      const work = deferred<string>();
      const raced = untilAborted(work.promise, controller.signal, onLate);
      controller.abort('cancelled');
      await expect(raced).rejects.toBe('cancelled');
      if (outcome === 'resolved') work.resolve('secret');
      else work.reject(new Error('secret'));
      await tick();
      expect(onLate.mock.calls).toEqual([[outcome]]);
    }
  });

  it('reports a late result of work raced on an already aborted signal', async () => {
    const onLate = jest.fn();
    const work = deferred<string>();
    await expect(untilAborted(work.promise, AbortSignal.abort('cancelled'), onLate)).rejects.toBe('cancelled');
    work.reject(new Error('late'));
    await tick();
    expect(onLate.mock.calls).toEqual([['rejected']]);
  });
});
