import type { EvalIdentitySource } from '../eval.types';
import type { ResolvedEvalServiceOptions } from './eval-service-options';
import type { EvalServiceState } from './eval-service.types';

/** The service's self-description (spec 05 §9): from memory, content-free. */
export interface EvalCapabilities {
  readonly schema_version: 1;
  readonly contract_version: 1;
  readonly status: EvalServiceState;
  readonly identity_source: EvalIdentitySource | null;
  readonly max_concurrency: number;
  readonly max_queue: number;
  readonly max_queue_bytes: number;
  readonly active_jobs: number;
  readonly queued_jobs: number;
  readonly queued_bytes: number;
  readonly pending_submissions: number;
  readonly recovered_jobs: number;
  readonly worker: 'local' | 'custom';
  readonly store: { readonly persistence: 'postgres'; readonly tables: 5 };
}

/** What the capabilities record is read from: the service's state, its options and its counts. */
export interface EvalServiceSnapshot {
  readonly state: EvalServiceState;
  readonly identitySource: EvalIdentitySource | null;
  readonly options: ResolvedEvalServiceOptions;
  readonly activeJobs: number;
  readonly queuedJobs: number;
  readonly queuedBytes: number;
  readonly pendingSubmissions: number;
  readonly recoveredJobs: number;
}

/** The frozen capabilities record of a snapshot. */
export function evalCapabilities(snapshot: EvalServiceSnapshot): EvalCapabilities {
  const o = snapshot.options;
  return Object.freeze({
    schema_version: 1,
    contract_version: 1,
    status: snapshot.state,
    identity_source: snapshot.identitySource,
    max_concurrency: o.maxConcurrency,
    max_queue: o.maxQueue,
    max_queue_bytes: o.maxQueueBytes,
    active_jobs: snapshot.activeJobs,
    queued_jobs: snapshot.queuedJobs,
    queued_bytes: snapshot.queuedBytes,
    pending_submissions: snapshot.pendingSubmissions,
    recovered_jobs: snapshot.recoveredJobs,
    worker: o.worker === 'local' ? 'local' : 'custom',
    store: Object.freeze({ persistence: 'postgres', tables: 5 }),
  });
}
