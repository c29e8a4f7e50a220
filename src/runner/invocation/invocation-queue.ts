/**
 * One resume of an invocation at a time in this process: a resume reads the paused turn, answers its
 * call and decides whether calls are still pending, so two resumes of different calls of one turn
 * must not interleave. (Across processes a durable invocation is serialised by its ledger claim.)
 */
const tails = new Map<string, Promise<void>>();

/** Waits for the earlier resumes of `invocationId`; the returned function lets the next one go. */
export async function takeInvocationTurn(invocationId: string): Promise<() => void> {
  const previous = tails.get(invocationId) ?? Promise.resolve();
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => done);
  tails.set(invocationId, tail);
  await previous;
  return () => {
    release();
    if (tails.get(invocationId) === tail) tails.delete(invocationId);
  };
}
