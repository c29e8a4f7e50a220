export type { RunnerTracerProvider, RunnerTracing, RunnerTracingOptions } from './runner-tracing.types';
