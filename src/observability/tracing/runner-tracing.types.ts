// The public types of the tracing option: no reference to `@opentelemetry/api`, so they compile without it.

/** What the Runner needs of a tracer provider: `BasicTracerProvider`, `NodeTracerProvider` and the global one fit. */
export interface RunnerTracerProvider {
  getTracer(name: string, version?: string): unknown;
}

/** Where the Runner's OpenTelemetry spans go. */
export interface RunnerTracingOptions {
  /**
   * The provider the spans are created with.
   * @default the global provider of `@opentelemetry/api` (`trace.getTracer`), resolved when a span starts, so an SDK registered after the Runner was built is used
   */
  readonly tracerProvider?: RunnerTracerProvider;
}

/**
 * The Runner's `tracing` option: `true` (the global provider) or {@link RunnerTracingOptions} turn the
 * `invoke_agent`, `chat` and `execute_tool` spans on; `false` or absent leaves them off. Without
 * `@opentelemetry/api` installed it is a no-op.
 */
export type RunnerTracing = boolean | RunnerTracingOptions;
