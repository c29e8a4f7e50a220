import type { AdmissionRequestOptions } from '../../admission/admission-request';
import type { PermitSource } from '../../admission/admission-service';
import { runUnderPermit } from '../../admission/requests/admission-waiters';
import type { Permit } from '../../admission/permit';
import { isProviderOverloadError, ModelCallReports } from '../../admission/model-call-reports';
import { AdmissionError } from '../../admission/admission.errors';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';

const anyValue = (): boolean => true;
// the controller validates each value precisely; unknown keys (a typo such as `queueTimeout`) are refused here
const REQUEST_KEYS = { owner: anyValue, signal: anyValue, overflow: anyValue, deadline: anyValue, queueTimeoutMs: anyValue, tenant: anyValue, cost: anyValue, priority: anyValue };

/**
 * Runs `fn` — typically one whole `generateText`/`streamText` call — under one admission permit of
 * `agentId` (spec 01 §5.7): it acquires, calls `fn(signal)`, and releases in `finally` on every path
 * (result, throw, abort). `signal` is the permit's signal: it aborts when the permit is revoked, and
 * with `options.signal` as the owner (when no `owner` is given) aborting that signal stops queued and
 * running work alike: a queued call leaves the queue at once, a running one sees `signal` abort. Pass
 * it as the SDK's `abortSignal`. The permit is held until `fn`'s promise settles: `streamText` returns
 * at once, so for a streamed call `fn` must await the stream's end (its `text`, or `consumeStream()`).
 *
 * `options` take the flow options of spec 09 too: `tenant`, `cost` (estimated tokens) and `priority`.
 * `fn` gets the permit as its second argument, so it can `permit.settle(usage.totalTokens)`. The
 * call's outcome is reported on the permit (spec 09 §6) unless `fn` reported it: a rejection whose
 * `statusCode` (an `APICallError`, or a `RetryError`'s `lastError`) is 429 or 503 as `overloaded`, a
 * result as `ok`, with the call's latency; any other rejection is not reported (nothing says the
 * provider answered).
 *
 * Admission failures reject with the controller's `AdmissionError` before `fn` runs
 * (`concurrency_limit_reached` in reject mode, `admission_queue_full`, `queue_deadline_exceeded`,
 * `rate_limited`, `deployment_draining`, or the signal's reason when aborted while queued). A bad controller, `fn`
 * or options key rejects with `invalid_admission_options` (`details.field`). Never throws synchronously.
 *
 * @example
 * const result = await withAdmission(admission, 'support', (signal) =>
 *   generateText({ model, tools, prompt, abortSignal: signal }),
 *   { overflow: 'queue', queueTimeoutMs: 5_000, signal: request.signal, tenant: customerId },
 * );
 * // streamed: hold the permit until the stream has ended
 * await withAdmission(admission, 'support', async (signal) => {
 *   const result = streamText({ model, tools, prompt, abortSignal: signal });
 *   result.pipeUIMessageStreamToResponse(response);
 *   await result.consumeStream();
 * });
 */
export async function withAdmission<T>(
  controller: PermitSource,
  agentId: string,
  fn: (signal: AbortSignal, permit: Permit) => T | PromiseLike<T>,
  options?: AdmissionRequestOptions,
): Promise<T> {
  if (!isController(controller)) throw new AdmissionError('invalid_admission_options', { field: 'controller' });
  if (typeof fn !== 'function') throw new AdmissionError('invalid_admission_options', { field: 'fn' });
  const read = readOptions(options, REQUEST_KEYS, { name: 'opts', unknownKeys: 'refuse' });
  if (!read.ok) throw new AdmissionError('invalid_admission_options', optionFailureDetails(read.fields));
  return runUnderPermit(controller, agentId, (permit, signal) => reported(permit, () => fn(signal, permit)), options === undefined ? undefined : ({ ...read.values } as AdmissionRequestOptions));
}

async function reported<T>(permit: Permit, call: () => T | PromiseLike<T>): Promise<T> {
  const reports = new ModelCallReports();
  reports.attach(permit);
  const started = performance.now();
  try {
    const result = await call();
    reports.modelCallEnded(performance.now() - started, false);
    reports.finish();
    return result;
  } catch (error) {
    if (isProviderOverloadError(error)) reports.modelCallEnded(performance.now() - started, true);
    throw error;
  }
}

function isController(value: unknown): value is PermitSource {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<'acquire' | 'release', unknown>>;
  return typeof candidate.acquire === 'function' && typeof candidate.release === 'function';
}
