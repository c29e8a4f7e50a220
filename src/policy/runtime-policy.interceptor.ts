import { CallHandler, ExecutionContext, HttpException, Inject, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { concatMap, from, Observable, switchMap, throwError, type ObservableInput } from 'rxjs';
import { AuditRecorder } from './audit-log/audit-recorder';
import type { HttpErrorAnswer } from '../http/http-error-mapper';
import { auditFailureAnswer, denialAnswer } from './policy-http';
import type { PolicyDecision } from './policy-decision';
import { RuntimePolicy } from './runtime-policy';
import { AGENT_ENDPOINT, TOOL_ENDPOINT, type AgentEndpointOptions, type RequestExtractor, type ToolEndpointOptions } from './runtime-policy.constants';

/** The throwable form of an answer (where it says `retryAfter`, the header is set on the response first). */
const exceptionOf = (answer: HttpErrorAnswer): HttpException => new HttpException(answer.body, answer.status);

/** What an extractor that throws yields: a value no budget can measure. */
const UNMEASURABLE = Symbol('unmeasurable');

interface Endpoint {
  check(policy: RuntimePolicy, value: unknown): PolicyDecision;
  outputSubject: 'model_output' | 'tool_result';
  extract: RequestExtractor;
}

/**
 * Applies the runtime policy around a handler marked `@AgentEndpoint()` or `@ToolEndpoint()`:
 * the request is checked (and the decision recorded when selected) before the handler runs, and
 * each emitted value is checked before it reaches the client. A denial answers 403/413 with the
 * decision summary; a failed or hung audit sink answers 503. Content is never echoed.
 */
@Injectable()
export class RuntimePolicyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('RuntimePolicy');
  private readonly endpoints = new WeakMap<object, Endpoint | null>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(RuntimePolicy) private readonly policy: RuntimePolicy,
    @Inject(AuditRecorder) private readonly recorder: AuditRecorder,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const endpoint = this.endpointOf(context);
    if (!endpoint || context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const response = http.getResponse<object>();
    const decision = endpoint.check(this.policy, extract(endpoint.extract, http.getRequest()));
    const checkedOutput = concatMap((value: unknown) =>
      this.passed(this.policy.checkContent(endpoint.outputSubject, value === undefined ? '' : value), response, value),
    );
    // a decision that is not recorded is answered without a promise: most allows on the hot path
    if (!this.recorder.selects(decision)) {
      return decision.outcome === 'deny' ? throwError(() => exceptionOf(denialAnswer(decision))) : next.handle().pipe(checkedOutput);
    }
    return from(this.admit(decision, response)).pipe(
      switchMap(() => next.handle()),
      checkedOutput,
    );
  }

  /** `value` once `decision` is recorded (when selected) and allows it; the denial otherwise. */
  private passed(decision: PolicyDecision, response: object, value: unknown): ObservableInput<unknown> {
    if (this.recorder.selects(decision)) return this.admit(decision, response).then(() => value);
    if (decision.outcome === 'deny') throw exceptionOf(denialAnswer(decision));
    return [value];
  }

  /** Records the decision when selected, then lets an allow through or throws the denial. */
  private async admit(decision: PolicyDecision, response: object): Promise<void> {
    try {
      await this.recorder.record(decision);
    } catch {
      this.logger.error(`audit sink failed to record decision ${decision.decision_id}; request refused`);
      // an outage: the client may retry, as with every 503 of the package
      this.adapterHost.httpAdapter.setHeader(response, 'Retry-After', '1');
      throw exceptionOf(auditFailureAnswer());
    }
    if (decision.outcome === 'deny') throw exceptionOf(denialAnswer(decision));
  }

  /** The endpoint of the handler, read from its metadata once (`null` when it has none). */
  private endpointOf(context: ExecutionContext): Endpoint | null {
    const handler = context.getHandler();
    let endpoint = this.endpoints.get(handler);
    if (endpoint === undefined) {
      endpoint = this.readEndpoint(handler);
      this.endpoints.set(handler, endpoint);
    }
    return endpoint;
  }

  private readEndpoint(handler: object): Endpoint | null {
    const agent = this.reflector.get<AgentEndpointOptions | undefined>(AGENT_ENDPOINT, handler as () => void);
    if (agent) {
      return { check: (policy, value) => policy.checkAgent(agent.agent, value), outputSubject: 'model_output', extract: agent.input ?? bodyOr('') };
    }
    const tool = this.reflector.get<ToolEndpointOptions | undefined>(TOOL_ENDPOINT, handler as () => void);
    if (tool) {
      return { check: (policy, value) => policy.checkTool(tool.tool, value), outputSubject: 'tool_result', extract: tool.args ?? bodyOr({}) };
    }
    return null;
  }
}

function bodyOr(fallback: unknown): RequestExtractor {
  return (request: { body?: unknown }) => (request.body === undefined ? fallback : request.body);
}

function extract(extractor: RequestExtractor, request: unknown): unknown {
  try {
    return extractor(request);
  } catch {
    return UNMEASURABLE;
  }
}
