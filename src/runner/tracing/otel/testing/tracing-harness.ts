import { inspect } from 'node:util';
import { SpanStatusCode, type Context } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** Counts spans started and not yet ended, to prove every path ends what it started. */
class OpenSpans implements SpanProcessor {
  readonly open = new Set<string>();
  started = 0;
  onStart(span: Span, _parent: Context): void {
    this.started += 1;
    this.open.add(span.spanContext().spanId);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span.spanContext().spanId);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A provider whose ended spans land in memory, with helpers to read the tree. */
export class SpanRecorder {
  readonly exporter = new InMemorySpanExporter();
  readonly #open = new OpenSpans();
  readonly provider = new BasicTracerProvider({ spanProcessors: [this.#open, new SimpleSpanProcessor(this.exporter)] });

  get spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** Spans started and never ended. */
  get openCount(): number {
    return this.#open.open.size;
  }

  get startedCount(): number {
    return this.#open.started;
  }

  byOperation(operation: 'invoke_agent' | 'chat' | 'execute_tool'): ReadableSpan[] {
    return this.spans.filter((span) => span.attributes['gen_ai.operation.name'] === operation);
  }

  /** The one `invoke_agent` span (fails when there is not exactly one). */
  root(): ReadableSpan {
    const roots = this.byOperation('invoke_agent');
    expect(roots).toHaveLength(1);
    return roots[0];
  }

  /** Every exported span in full (names, attributes, events, status, links, ids, scope, resource). */
  serialized(): string {
    return this.spans.map((span) => `${inspect(span, { depth: null, maxArrayLength: null, maxStringLength: null, showHidden: true })}\n${JSON.stringify(plain(span))}`).join('\n');
  }
}

/** The parts of a span a reader of an exporter sees, as JSON. */
export function plain(span: ReadableSpan): object {
  return {
    name: span.name,
    kind: span.kind,
    context: span.spanContext(),
    parent: span.parentSpanContext,
    status: span.status,
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
    links: span.links,
    scope: span.instrumentationScope,
  };
}

/** True when `child` was started with `parent` as its parent span. */
export function isChildOf(child: ReadableSpan, parent: ReadableSpan): boolean {
  return child.parentSpanContext?.spanId === parent.spanContext().spanId && child.spanContext().traceId === parent.spanContext().traceId;
}

/** The attributes of a span's events with that name. */
export function eventsNamed(span: ReadableSpan, name: string): Array<Record<string, unknown>> {
  return span.events.filter((event) => event.name === name).map((event) => ({ ...event.attributes }));
}

/** Asserts an ERROR status with no message and the given `error.type`. */
export function expectErrorSpan(span: ReadableSpan, errorType: string): void {
  expect(span.status.code).toBe(SpanStatusCode.ERROR);
  expect(span.status.message).toBeUndefined();
  expect(span.attributes['error.type']).toBe(errorType);
}

/** Asserts an UNSET status and no `error.type`. */
export function expectOkSpan(span: ReadableSpan): void {
  expect(span.status.code).toBe(SpanStatusCode.UNSET);
  expect(span.attributes['error.type']).toBeUndefined();
}
