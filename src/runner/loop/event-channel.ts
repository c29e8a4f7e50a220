/**
 * A single-consumer queue between an invocation running in the background and the generator that
 * yields its events: items are delivered in push order, then the end (a value or an error).
 */
export class EventChannel<T, R> {
  readonly #items: T[] = [];
  #end: { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown } | null = null;
  #wake: (() => void) | null = null;

  push(item: T): void {
    if (this.#end !== null) return;
    this.#items.push(item);
    this.#notify();
  }

  close(value: R): void {
    if (this.#end !== null) return;
    this.#end = { ok: true, value };
    this.#notify();
  }

  fail(error: unknown): void {
    if (this.#end !== null) return;
    this.#end = { ok: false, error };
    this.#notify();
  }

  /** The next item, or the end: the value as `{done: true}`, the error thrown. */
  async next(): Promise<IteratorResult<T, R>> {
    for (;;) {
      if (this.#items.length > 0) return { done: false, value: this.#items.shift() as T };
      if (this.#end !== null) {
        if (this.#end.ok) return { done: true, value: this.#end.value };
        throw this.#end.error;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
