/** What `fn` throws synchronously (checked to be an `errorClass` when given); fails when it returns. */
export function thrown<E = unknown>(fn: () => unknown, errorClass?: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (error) {
    if (errorClass) expect(error).toBeInstanceOf(errorClass);
    return error as E;
  }
  throw new Error('expected a throw');
}
