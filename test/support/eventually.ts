/** Polls `check` until it returns a truthy value or `timeoutMs` pass. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition'): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
