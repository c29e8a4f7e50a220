import type { Counter, Histogram, Registry } from 'prom-client';
import { promClient } from './prom-client-loader';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import type { LabelFold } from './label-fold';
import {
  ADMISSION_OUTCOMES,
  EVAL_PHASES,
  invocationStatusOf,
  LEDGER_OPERATIONS,
  LEDGER_OUTCOMES,
  POLICY_OPERATIONS,
  POLICY_OUTCOMES,
  POLICY_REASONS,
  RUNNER_OUTCOMES,
} from './metric-label-values';

/** Bucket bounds in seconds: admission waits and ledger statements are short, invocations long. */
const WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LEDGER_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const INVOCATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

type Payload = Readonly<Record<string, unknown>>;

/**
 * The counters and histograms fed by the package's telemetry events. Every label value comes from
 * a closed set (a spec's union, or the configured agent ids), so a payload can never add a series
 * of its own; a field that is missing or of the wrong type folds into `_other` or is not observed.
 * It is itself a `TelemetrySink`, so a component built without Nest can take it as its `events`.
 */
export class TelemetryMetrics implements TelemetrySink {
  readonly #agents: LabelFold;
  readonly #tenants: LabelFold;
  readonly #admissionDecisions: Counter<'agent_id' | 'tenant_id' | 'outcome'>;
  readonly #admissionWait: Histogram<'agent_id'>;
  readonly #policyDecisions: Counter<'operation' | 'outcome' | 'reason'>;
  readonly #ledgerOperations: Counter<'operation' | 'outcome'>;
  readonly #ledgerDuration: Histogram<'operation'>;
  readonly #invocations: Counter<'agent_id' | 'status' | 'outcome'>;
  readonly #invocationDuration: Histogram<'agent_id' | 'status'>;
  readonly #evalTransitions: Counter<'from' | 'to'>;
  readonly #handlers: ReadonlyMap<string, (payload: Payload) => void>;

  constructor(registry: Registry, agents: LabelFold, tenants: LabelFold) {
    const { Counter, Histogram } = promClient();
    const registers = [registry];
    this.#agents = agents;
    this.#tenants = tenants;
    this.#admissionDecisions = new Counter({
      name: 'agent_runtime_admission_decisions_total',
      help: 'Admission lifecycle transitions by agent, tenant (named tenants; every other tenant and no tenant in _other) and outcome.',
      labelNames: ['agent_id', 'tenant_id', 'outcome'],
      registers,
    });
    this.#admissionWait = new Histogram({
      name: 'agent_runtime_admission_queue_wait_seconds',
      help: 'Time from submit to grant, observed on every granted decision (0 for an immediate grant).',
      labelNames: ['agent_id'],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.#policyDecisions = new Counter({
      name: 'agent_runtime_policy_decisions_total',
      help: 'Runtime policy decisions by operation, outcome and reason.',
      labelNames: ['operation', 'outcome', 'reason'],
      registers,
    });
    this.#ledgerOperations = new Counter({
      name: 'agent_runtime_ledger_operations_total',
      help: "Invocation ledger operations by operation and outcome ('ok' or the error code).",
      labelNames: ['operation', 'outcome'],
      registers,
    });
    this.#ledgerDuration = new Histogram({
      name: 'agent_runtime_ledger_operation_duration_seconds',
      help: 'Duration of invocation ledger operations.',
      labelNames: ['operation'],
      buckets: LEDGER_BUCKETS,
      registers,
    });
    this.#invocations = new Counter({
      name: 'agent_runtime_runner_invocations_total',
      help: 'Finished Runner invocations by agent, status and outcome (the result status or the error code).',
      labelNames: ['agent_id', 'status', 'outcome'],
      registers,
    });
    this.#invocationDuration = new Histogram({
      name: 'agent_runtime_runner_invocation_duration_seconds',
      help: 'Duration of Runner invocations by agent and status.',
      labelNames: ['agent_id', 'status'],
      buckets: INVOCATION_BUCKETS,
      registers,
    });
    this.#evalTransitions = new Counter({
      name: 'agent_runtime_eval_job_transitions_total',
      help: 'Evaluation job phase transitions.',
      labelNames: ['from', 'to'],
      registers,
    });
    this.#handlers = new Map<string, (payload: Payload) => void>([
      [TelemetryEvents.admissionDecision, (payload) => this.#admission(payload)],
      [TelemetryEvents.policyDecision, (payload) => this.#policy(payload)],
      [TelemetryEvents.ledgerOperation, (payload) => this.#ledger(payload)],
      [TelemetryEvents.runnerInvocation, (payload) => this.#invocation(payload)],
      [TelemetryEvents.evaluationJob, (payload) => this.#evaluation(payload)],
    ]);
  }

  /** The event names this records. */
  get events(): readonly string[] {
    return [...this.#handlers.keys()];
  }

  /** Records one telemetry event; other events and unreadable payloads are ignored. Never throws. */
  emit(event: string, payload: object): void {
    const handler = this.#handlers.get(event);
    if (handler === undefined || typeof payload !== 'object' || payload === null) return;
    try {
      handler(payload as Payload);
    } catch {
      // a payload built to throw (a getter, a Proxy) must not stop the emitter's other listeners
    }
  }

  #admission(payload: Payload): void {
    const agentId = this.#agents.fold(payload.agent_id);
    const outcome = ADMISSION_OUTCOMES.fold(payload.outcome);
    // a decision carries tenant_id only for a tenant named in configuration (spec 09 §7)
    this.#admissionDecisions.inc({ agent_id: agentId, tenant_id: this.#tenants.fold(payload.tenant_id), outcome });
    const wait = seconds(payload.wait_ms);
    if (outcome === 'granted' && wait !== undefined) this.#admissionWait.observe({ agent_id: agentId }, wait);
  }

  #policy(payload: Payload): void {
    this.#policyDecisions.inc({
      operation: POLICY_OPERATIONS.fold(payload.operation),
      outcome: POLICY_OUTCOMES.fold(payload.outcome),
      reason: POLICY_REASONS.fold(payload.reason),
    });
  }

  #ledger(payload: Payload): void {
    const operation = LEDGER_OPERATIONS.fold(payload.operation);
    this.#ledgerOperations.inc({ operation, outcome: LEDGER_OUTCOMES.fold(payload.outcome) });
    const duration = seconds(payload.duration_ms);
    if (duration !== undefined) this.#ledgerDuration.observe({ operation }, duration);
  }

  #invocation(payload: Payload): void {
    const agentId = this.#agents.fold(payload.agent_id);
    const outcome = RUNNER_OUTCOMES.fold(payload.outcome);
    const status = invocationStatusOf(outcome);
    this.#invocations.inc({ agent_id: agentId, status, outcome });
    const duration = seconds(payload.duration_ms);
    if (duration !== undefined) this.#invocationDuration.observe({ agent_id: agentId, status }, duration);
  }

  #evaluation(payload: Payload): void {
    this.#evalTransitions.inc({ from: EVAL_PHASES.fold(payload.from), to: EVAL_PHASES.fold(payload.to) });
  }
}

/** Milliseconds as seconds (the Prometheus base unit); `undefined` for anything but a finite number ≥ 0. */
function seconds(ms: unknown): number | undefined {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms / 1000 : undefined;
}
