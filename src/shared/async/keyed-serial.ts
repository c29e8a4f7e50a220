/**
 * Runs the work given for one key one after another, in the order given; work for different keys
 * runs independently. A failed piece of work fails its own caller only. Keys whose work is done are
 * forgotten, so memory follows the keys with work in flight.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
