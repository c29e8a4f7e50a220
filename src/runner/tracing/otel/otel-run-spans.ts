import type { Attributes, Context, Span, SpanKind, Tracer } from '@opentelemetry/api';
import type { PolicyDecision, PolicyOperation } from '../../../policy/runtime-policy.types';
import type { JsonValue } from '../../content.types';
import { RunnerError } from '../../runner.errors';
import type { ToolCallOutcome } from '../../tools/tool-call-step';
import { NO_RUN_SPANS, type RunAdmissionOutcome, type ChatSpan, type RunSpans, type RunTracer, type ToolSpan } from '../run-tracer';
import type { ErrorDetails } from '../../../shared/errors/agent-runtime-error';
import { GenAiAttributes as G, GenAiOperations, RuntimeAttributes as R } from './gen-ai-attributes';
import type { OtelApi } from './otel-api-loader';

/** Model-visible error kinds (spec 03 §6.11); any other kind is reported as OpenTelemetry's `_OTHER`. */
const TOOL_ERROR_KINDS: ReadonlySet<string> = new Set([
  'runtime_policy_denied',
  'invalid_tool_arguments',
  'tool_not_found',
  'tool_unavailable',
  'tool_error',
  'confirmation_rejected',
  'confirmation_unavailable',
]);
/** Run errors whose `details.reason` is a code of a closed union (a cancel reason is the caller's, so it is left out). */
const REASONED_CODES: ReadonlySet<string> = new Set(['admission_failed', 'runtime_policy_denied', 'model_failed', 'invalid_plugin_amendment', 'ledger_failed']);
const REASON_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** Telemetry never breaks the Runner: a throwing SDK or provider is ignored. */
function quietly(work: () => void): void {
  try {
    work();
  } catch {
    // the span is lost, the run is not
  }
}

function reasonOf(code: string, details: ErrorDetails | undefined): string | undefined {
  const reason = (details as { reason?: unknown } | undefined)?.reason;
  return REASONED_CODES.has(code) && typeof reason === 'string' && REASON_CODE.test(reason) ? reason : undefined;
}

function codeOf(error: unknown): { code: string; details: ErrorDetails | undefined } {
  return RunnerError.isRunnerError(error) ? { code: error.code, details: error.details } : { code: 'internal_error', details: undefined };
}

/** A Runner's tracer over the OpenTelemetry API. */
export class OtelRunTracer implements RunTracer {
  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
  ) {}

  startRun(agentName: string, invocationId: string, runId: string | undefined): RunSpans {
    try {
      return new OtelRunSpans(this.api, this.tracer, agentName, invocationId, runId);
    } catch {
      // without a run span no child can be parented: the invocation runs untraced
      return NO_RUN_SPANS;
    }
  }
}

/** The `invoke_agent` span of one invocation and its `chat` and `execute_tool` children. */
class OtelRunSpans implements RunSpans {
  readonly #span: Span;
  readonly #context: Context;
  readonly #open = new Set<Span>();
  #inputTokens: number | undefined;
  #outputTokens: number | undefined;
  #ended = false;

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
    agentName: string,
    invocationId: string,
    runId: string | undefined,
  ) {
    const attributes: Attributes = { [G.operationName]: GenAiOperations.invokeAgent, [G.agentName]: agentName, [R.invocationId]: invocationId };
    if (runId !== undefined) attributes[R.runId] = runId;
    const parent = api.context.active();
    this.#span = tracer.startSpan(`${GenAiOperations.invokeAgent} ${agentName}`, { kind: api.SpanKind.INTERNAL, attributes }, parent);
    // children are parented explicitly, so the tree holds without a context manager
    this.#context = api.trace.setSpan(parent, this.#span);
  }

  admission(outcome: RunAdmissionOutcome, waitMs: number, reason?: string): void {
    quietly(() => {
      const attributes: Attributes = { [R.admissionOutcome]: outcome, [R.admissionWaitMs]: waitMs };
      if (reason !== undefined) attributes[R.admissionReason] = reason;
      this.#span.addEvent(R.admissionEvent, attributes);
    });
  }

  policy(operation: PolicyOperation, denied: PolicyDecision | null): void {
    quietly(() => this.#span.addEvent(R.policyEvent, policyAttributes(operation, denied)));
  }

  startChat(agentName: string, modelName: string | undefined): ChatSpan {
    const attributes: Attributes = { [G.operationName]: GenAiOperations.chat, [G.agentName]: agentName };
    if (modelName !== undefined) attributes[G.requestModel] = modelName;
    const span = this.#child(modelName === undefined ? GenAiOperations.chat : `${GenAiOperations.chat} ${modelName}`, this.api.SpanKind.CLIENT, attributes);
    return {
      run: (work) => this.#within(span, work),
      succeed: (usage) =>
        this.#finish(span, () => {
          span.setAttribute(R.outcome, 'ok');
          if (usage.inputTokens !== undefined) {
            span.setAttribute(G.inputTokens, usage.inputTokens);
            this.#inputTokens = (this.#inputTokens ?? 0) + usage.inputTokens;
          }
          if (usage.outputTokens !== undefined) {
            span.setAttribute(G.outputTokens, usage.outputTokens);
            this.#outputTokens = (this.#outputTokens ?? 0) + usage.outputTokens;
          }
        }),
      fail: (error) =>
        this.#finish(span, () => {
          const { code, details } = codeOf(error);
          this.#markError(span, 'error', code, reasonOf(code, details));
        }),
    };
  }

  startTool(agentName: string): ToolSpan {
    const span = this.#child(GenAiOperations.executeTool, this.api.SpanKind.INTERNAL, { [G.operationName]: GenAiOperations.executeTool, [G.agentName]: agentName });
    let deniedReason: string | undefined;
    return {
      run: (work) => this.#within(span, work),
      identify: (toolName) =>
        quietly(() => {
          span.updateName(`${GenAiOperations.executeTool} ${toolName}`);
          span.setAttribute(G.toolName, toolName);
        }),
      policy: (operation, denied) =>
        quietly(() => {
          if (denied !== null) deniedReason = denied.reason;
          span.addEvent(R.policyEvent, policyAttributes(operation, denied));
        }),
      end: (outcome, response) => this.#finish(span, () => endTool(this.api, span, outcome, response, deniedReason)),
    };
  }

  end(outcome: string, code: string | undefined, details: ErrorDetails | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const child of [...this.#open]) this.#finish(child, () => this.#markError(child, outcome, code ?? 'interrupted', undefined));
    quietly(() => {
      const span = this.#span;
      if (this.#inputTokens !== undefined) span.setAttribute(G.inputTokens, this.#inputTokens);
      if (this.#outputTokens !== undefined) span.setAttribute(G.outputTokens, this.#outputTokens);
      if (code === undefined) span.setAttribute(R.outcome, outcome);
      else this.#markError(span, outcome, code, reasonOf(code, details));
    });
    quietly(() => this.#span.end());
  }

  #child(name: string, kind: SpanKind, attributes: Attributes): Span {
    let span: Span;
    try {
      span = this.tracer.startSpan(name, { kind, attributes }, this.#context);
    } catch {
      span = this.api.trace.wrapSpanContext(this.api.INVALID_SPAN_CONTEXT);
    }
    if (!this.#ended) this.#open.add(span);
    else quietly(() => span.end());
    return span;
  }

  #within<T>(span: Span, work: () => T): T {
    let context: Context;
    try {
      context = this.api.trace.setSpan(this.#context, span);
    } catch {
      return work();
    }
    return this.api.context.with(context, work);
  }

  /** Ends a child once, whatever `record` does. */
  #finish(span: Span, record: () => void): void {
    if (!this.#open.delete(span)) return;
    quietly(record);
    quietly(() => span.end());
  }

  #markError(span: Span, outcome: string, code: string, reason: string | undefined): void {
    span.setAttribute(R.outcome, outcome);
    span.setAttribute(G.errorType, code);
    if (reason !== undefined) span.setAttribute(R.reason, reason);
    // no status message: it would be the one free-text field of the span
    span.setStatus({ code: this.api.SpanStatusCode.ERROR });
  }
}

function endTool(api: OtelApi, span: Span, outcome: ToolCallOutcome, response: JsonValue | undefined, deniedReason: string | undefined): void {
  span.setAttribute(R.outcome, outcome);
  if (outcome === 'denied' && deniedReason !== undefined) span.setAttribute(R.reason, deniedReason);
  const failed = response as { success?: unknown; error?: { kind?: unknown } } | null | undefined;
  if (typeof failed !== 'object' || failed === null || failed.success !== false) return;
  const kind = typeof failed.error === 'object' && failed.error !== null ? failed.error.kind : undefined;
  span.setAttribute(G.errorType, typeof kind === 'string' && TOOL_ERROR_KINDS.has(kind) ? kind : '_OTHER');
  span.setStatus({ code: api.SpanStatusCode.ERROR });
}

function policyAttributes(operation: PolicyOperation, denied: PolicyDecision | null): Attributes {
  if (denied === null) return { [R.policyOperation]: operation, [R.policyOutcome]: 'allow', [R.policyReason]: 'allowed' };
  return { [R.policyOperation]: denied.operation, [R.policyOutcome]: denied.outcome, [R.policyReason]: denied.reason, [R.policyDecisionId]: denied.decision_id };
}

