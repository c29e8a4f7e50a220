// The public types of `openTelemetryTracing`: no reference to `@opentelemetry/api`, so they compile without it.

/** What the tracer needs of a tracer provider: `BasicTracerProvider`, `NodeTracerProvider` and the global one fit. */
export interface RunnerTracerProvider {
  getTracer(name: string, version?: string): unknown;
}

/** Options of {@link openTelemetryTracing}. Unknown keys and bad values give `invalid_runner_options {field: 'tracing'}`. */
export interface OpenTelemetryTracingOptions {
  /**
   * The provider the spans are created with.
   * @default the global provider of `@opentelemetry/api` (`trace.getTracer`), resolved when a span starts, so an SDK registered after the Runner was built is used
   */
  readonly tracerProvider?: RunnerTracerProvider;
  /** Told once, without content, when `@opentelemetry/api` cannot be loaded (the tracer is then a no-op); the Runner's `logger` fits. @default none */
  readonly logger?: { warn(message: string): void };
}
