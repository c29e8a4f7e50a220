/** What `work` rejects with (checked to be an `errorClass` when given); fails when it resolves. The async twin of `thrown`. */
export async function rejected<E = unknown>(work: Promise<unknown>, errorClass?: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await work;
  } catch (error) {
    if (errorClass) expect(error).toBeInstanceOf(errorClass);
    return error as E;
  }
  throw new Error('expected a rejection');
}
