/** Where components send telemetry events; `EventEmitter2` from `@nestjs/event-emitter` fits. */
export interface TelemetrySink {
  emit(event: string, payload: object): unknown;
}

/** Emits and swallows whatever a listener throws: telemetry never breaks the emitting component. */
export function emitSafely(sink: TelemetrySink, event: string, payload: object): void {
  try {
    const result = sink.emit(event, payload) as { then?: unknown } | null | undefined;
    if (result && typeof result.then === 'function') (result as Promise<unknown>).then(undefined, ignore);
  } catch {
    // a broken listener is the listener's problem, never the emitter's
  }
}

function ignore(): void {}
