import { newEvalJobId } from './eval-scope';
import { systemClock, type Clock } from '../shared/time/clock';
import { EvalServiceError } from './eval.errors';
import type { EvalScope, EvalStore } from './eval.types';
import { LocalEvalExecutor, type EvalRunnerRegistry } from './executor/local-eval-executor';
import { compareResults, type EvalRegressionReport } from './executor/regression-report';

/** What the regression gate compares: a candidate agent against a named baseline of a set. */
export interface EvalGateRequest {
  readonly scope: EvalScope;
  readonly evalSetId: string;
  readonly baseline: string;
  /** The candidate: a root agent of the registry. */
  readonly agent: string;
  /** How far a metric may drop below the baseline, 0..1. @default 0 */
  readonly tolerance?: number;
}

/**
 * The regression gate without a job: reads the baseline, its job and the set revision that job ran
 * (reads only, so it works beside a running service that owns the store), runs that revision with
 * the baseline's metrics and options through the candidate agent in process, and compares. The
 * candidate's result is not stored. A candidate run that cannot complete is `evaluation_job_terminal`
 * with its reason.
 */
export async function runEvalGate(
  store: Pick<EvalStore, 'getBaseline' | 'getJob' | 'getSet'>,
  registry: EvalRunnerRegistry,
  request: EvalGateRequest,
  deps: { readonly clock?: Clock; readonly signal?: AbortSignal } = {},
): Promise<EvalRegressionReport> {
  const base = await store.getBaseline(request.scope, request.evalSetId, request.baseline);
  const baselineJob = await store.getJob(request.scope, base.job_id);
  const set = await store.getSet(request.scope, request.evalSetId, baselineJob.eval_set_version);
  const candidateId = newEvalJobId();
  const executor = new LocalEvalExecutor(registry, { clock: deps.clock ?? systemClock });
  const outcome = await executor.start(
    { job_id: candidateId, scope: request.scope, agent: request.agent, set: set.content, metrics: baselineJob.metrics, options: baselineJob.options },
    deps.signal ?? new AbortController().signal,
  );
  if (outcome.status !== 'completed') throw new EvalServiceError('evaluation_job_terminal', { phase: 'failed', reason: outcome.reason });
  return compareResults({ job_id: base.job_id, result: base.result }, { job_id: candidateId, result: outcome.result }, { tolerance: request.tolerance ?? 0 });
}

/**
 * The candidate agents of the `eval-gate` command: what the function a `--agents` module exports
 * (as `evalGateAgents` or `default`) returns. `close` runs once the gate is done (close a Nest
 * application context there).
 */
export interface EvalGateAgents {
  readonly registry: EvalRunnerRegistry;
  close?(): void | Promise<void>;
}

/**
 * What a `--agents` module of the `eval-gate` command exports: a function of the database URL the
 * command runs on, returning the agents' registry (a `RunRegistry` fits).
 *
 * @example
 * export const evalGateAgents: EvalGateAgentsFactory = async ({ databaseUrl }) => {
 *   const app = await NestFactory.createApplicationContext(AppModule.forRoot(databaseUrl), { logger: ['error'] });
 *   return { registry: app.get(RunRegistry), close: () => app.close() };
 * };
 */
export type EvalGateAgentsFactory = (context: { readonly databaseUrl: string }) => EvalGateAgents | Promise<EvalGateAgents>;
