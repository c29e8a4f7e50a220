import { handled, rejectedWith } from './handled-promise';

describe('handled promises', () => {
  let unhandled: unknown[];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled = [];
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

  it('a dropped rejectedWith() is never reported as unhandled, and an awaiting caller still sees it', async () => {
    const reason = new Error('x');
    rejectedWith(reason);
    await expect(rejectedWith(reason)).rejects.toBe(reason);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('handled() keeps the original promise and its outcome', async () => {
    let reject!: (reason: unknown) => void;
    const promise = new Promise((_, r) => (reject = r));
    expect(handled(promise)).toBe(promise);
    reject('late');
    await settle();
    expect(unhandled).toEqual([]);
    await expect(promise).rejects.toBe('late');
  });
});
