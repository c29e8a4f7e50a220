import * as path from 'node:path';
import { canonicalJson } from '../../json/canonical-json';
import { rejected } from '../../shared/testing/rejected';
import { sha256Hex } from '../../shared/text/sha256';
import { ManualClock } from '../../shared/time/manual-clock';
import { EvalServiceError } from '../eval.errors';
import { deepMetadataRequest, escapeHeavyRequest, metricsFloodRequest, nearLimitRequest, oversizedRequest, validSubmitRequest } from '../testing/eval-requests';
import { resolvePreparationOptions, type PreparationOptions } from './preparation-options';
import { RequestPreparationPool, type RequestPreparationPoolDeps } from './request-preparation-pool';

/** The fixture worker: `metadata.hostile` makes it spin, allocate, throw, exit or hold (see the file). */
const HOSTILE_WORKER = path.resolve(__dirname, '..', 'testing', 'hostile-preparation.worker.js');
/** The service's job timeout, which bounds `case_timeout_ms`. */
const LIMITS = { taskTimeoutMs: 3_600_000 };

const hostile = (mode: 'spin' | 'allocate' | 'throw' | 'exit' | 'hold', extra: Record<string, unknown> = {}) => validSubmitRequest({ metadata: { hostile: mode, ...extra } });

let pools: RequestPreparationPool[] = [];

afterEach(async () => {
  await Promise.all(pools.map((pool) => pool.destroy()));
  pools = [];
});

function newPool(options: PreparationOptions = {}, deps: RequestPreparationPoolDeps = {}): RequestPreparationPool {
  const pool = new RequestPreparationPool(resolvePreparationOptions({ threads: 2, ...options }), deps);
  pools.push(pool);
  return pool;
}

async function startedPool(options: PreparationOptions = {}, deps: RequestPreparationPoolDeps = {}): Promise<RequestPreparationPool> {
  const pool = newPool(options, deps);
  await pool.start();
  return pool;
}

/** The `EvalServiceError` a promise rejects with; fails when it resolves. */
const rejection = (promise: Promise<unknown>): Promise<EvalServiceError> => rejected(promise, EvalServiceError);

/** The pool still prepares a normal request, and nothing is left pending. */
async function expectServes(pool: RequestPreparationPool): Promise<void> {
  const prepared = await pool.prepare(validSubmitRequest(), LIMITS);
  expect(prepared.agent).toBe('assistant');
  expect(pool.pending).toBe(0);
}

/** Milliseconds until a `setImmediate` and a 1 ms timer have both come back. */
async function eventLoopRoundTrip(): Promise<number> {
  const started = performance.now();
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 1));
  return performance.now() - started;
}

describe('RequestPreparationPool (spec 05 §4.2)', () => {
  describe('start and the real worker', () => {
    it('prepares a request through the compiled worker: normalised, redacted, digested, frozen', async () => {
      const pool = await startedPool();
      const request = validSubmitRequest({ metadata: { api_token: 'hunter2', build: '7' } });
      const prepared = await pool.prepare(request, LIMITS);
      expect(prepared.set).toEqual(request.set);
      expect(prepared.set_digest).toBe(sha256Hex(canonicalJson(request.set)));
      expect(prepared.metadata).toEqual({ api_token: '[redacted]', build: '7' });
      expect(prepared.metrics[0]).toEqual({ name: 'response_match', threshold: 0.5, match: 'rouge_1' });
      expect(Object.isFrozen(prepared)).toBe(true);
      expect(Object.isFrozen(prepared.set.cases[1].expected_tool_calls?.[0].args)).toBe(true);
      // ordinary objects of the caller's realm, which the kernel's canonical JSON accepts
      expect(Object.getPrototypeOf(prepared.set)).toBe(Object.prototype);
      expect(sha256Hex(canonicalJson(prepared.set))).toBe(prepared.set_digest);
      expect(pool.pending).toBe(0);
    });

    it('answers a worker refusal as its EvalServiceError, with its details', async () => {
      const pool = await startedPool();
      const unknown = await rejection(pool.prepare({ ...validSubmitRequest(), zeta: 1, alpha: 2 }, LIMITS));
      expect(unknown.code).toBe('unknown_eval_request_fields');
      expect(unknown.details).toEqual({ fields: ['alpha', 'zeta'] });
      // within the pre-walk's string bound: only the worker's canonical size check refuses it
      const escapes = await rejection(pool.prepare(escapeHeavyRequest(), LIMITS));
      expect(escapes.code).toBe('evaluation_request_limit_exceeded');
      expect(escapes.details).toEqual({ limit: 'bytes' });
      const options = await rejection(pool.prepare(validSubmitRequest({ options: { case_timeout_ms: 10_000 } }), { taskTimeoutMs: 5000 }));
      expect(options.details).toEqual({ reason: 'case_timeout_ms' });
      await expectServes(pool);
    });

    it('prepares a near-limit request (49,999 nodes, 10,000 cases, ~1.8 MB) within the default 1000 ms', async () => {
      const pool = await startedPool({ taskTimeoutMs: 1000 });
      const prepared = await pool.prepare(nearLimitRequest(), LIMITS);
      expect(prepared.set.cases).toHaveLength(10_000);
    });

    it('refuses to start when no thread can load the worker (evaluation_request_validation_unavailable), and may start again', async () => {
      const pool = newPool({}, { filename: path.resolve(__dirname, 'no-such-worker.js') });
      expect((await rejection(pool.start())).code).toBe('evaluation_request_validation_unavailable');
      expect((await rejection(pool.start())).code).toBe('evaluation_request_validation_unavailable');
      expect((await rejection(pool.prepare(validSubmitRequest(), LIMITS))).code).toBe('evaluation_request_validation_unavailable');
    });

    it('answers evaluation_request_validation_unavailable before it is started', async () => {
      const pool = newPool();
      expect((await rejection(pool.prepare(validSubmitRequest(), LIMITS))).code).toBe('evaluation_request_validation_unavailable');
      expect(pool.pending).toBe(0);
    });
  });

  describe('the pre-walk on the event loop', () => {
    it.each([
      ['500,000 metrics', 'nodes', () => metricsFloodRequest()],
      ['metadata 10,000 levels deep', 'depth', () => deepMetadataRequest()],
      ['2 MiB + 1 KiB of strings', 'bytes', () => oversizedRequest()],
    ])('refuses %s before posting anything (limit %s)', async (_name, limit, build) => {
      const pool = await startedPool();
      const error = await rejection(pool.prepare(build(), LIMITS));
      expect(error.code).toBe('evaluation_request_limit_exceeded');
      expect(error.details).toEqual({ limit });
      expect(pool.pending).toBe(0);
    });

    it('copies the request within the call: a change made after it returns is not seen', async () => {
      const pool = await startedPool();
      const request = validSubmitRequest();
      const pending = pool.prepare(request, LIMITS);
      expect(pool.pending).toBe(1);
      request.set.cases[0].expected_output = 'changed';
      expect((await pending).set.cases[0].expected_output).toBe('hello');
    });

    it('never calls a getter of the request', async () => {
      const pool = await startedPool();
      const getter = jest.fn(() => 'x');
      const request = validSubmitRequest();
      Object.defineProperty(request, 'agent', { get: getter, enumerable: true });
      expect((await rejection(pool.prepare(request, LIMITS))).details).toEqual({ reason: 'accessor' });
      expect(getter).not.toHaveBeenCalled();
    });
  });

  describe('bounds of the pool', () => {
    it('answers the 65th concurrent preparation with evaluation_request_validation_busy at once while 64 are pending', async () => {
      const pool = await startedPool({ threads: 2, maxPending: 64, taskTimeoutMs: 1000 }, { filename: HOSTILE_WORKER });
      const held = Array.from({ length: 64 }, () => pool.prepare(hostile('hold', { ms: 800 }), LIMITS));
      expect(pool.pending).toBe(64);
      const started = performance.now();
      const busy = await rejection(pool.prepare(validSubmitRequest(), LIMITS));
      expect(busy.code).toBe('evaluation_request_validation_busy');
      expect(performance.now() - started).toBeLessThan(100);
      expect(pool.pending).toBe(64);
      const outcomes = await Promise.allSettled(held);
      // two threads finish at most two 800 ms holds within the 1000 ms each preparation has from submission
      const timedOut = outcomes.filter((outcome) => outcome.status === 'rejected' && (outcome.reason as EvalServiceError).code === 'evaluation_request_validation_timeout');
      const prepared = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(timedOut.length + prepared.length).toBe(64);
      expect(timedOut.length).toBeGreaterThanOrEqual(62);
      await expectServes(pool);
    });

    it('keeps the event loop answering while 64 hostile preparations spin in the threads', async () => {
      const pool = await startedPool({ threads: 2, maxPending: 64, taskTimeoutMs: 1000 }, { filename: HOSTILE_WORKER });
      const spinning = Array.from({ length: 64 }, () => rejection(pool.prepare(hostile('spin'), LIMITS)));
      const roundTrips: number[] = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        roundTrips.push(await eventLoopRoundTrip());
      }
      expect(pool.pending).toBe(64);
      expect(Math.max(...roundTrips)).toBeLessThan(500);
      for (const error of await Promise.all(spinning)) expect(error.code).toBe('evaluation_request_validation_timeout');
      await expectServes(pool);
    });

    it('answers evaluation_request_validation_timeout taskTimeoutMs after submission and terminates the spinning thread', async () => {
      // 1 s, not less: the serving check below runs under the same timeout, and a replacement thread
      // that loads its module on a loaded machine (CI's full suite) can take a few hundred ms
      const pool = await startedPool({ threads: 1, taskTimeoutMs: 1000 }, { filename: HOSTILE_WORKER });
      const started = performance.now();
      const error = await rejection(pool.prepare(hostile('spin'), LIMITS));
      const elapsed = performance.now() - started;
      expect(error.code).toBe('evaluation_request_validation_timeout');
      expect(elapsed).toBeGreaterThanOrEqual(990);
      expect(elapsed).toBeLessThan(2500);
      // one thread only: serving again proves the spinning one was replaced
      await expectServes(pool);
    });

    it('times out the real worker given 1 ms for a near-limit request', async () => {
      const pool = await startedPool({ threads: 1, taskTimeoutMs: 1 });
      expect((await rejection(pool.prepare(nearLimitRequest(), LIMITS))).code).toBe('evaluation_request_validation_timeout');
      expect(pool.pending).toBe(0);
    });

    it('times each preparation on the injected clock', async () => {
      const clock = new ManualClock();
      const pool = await startedPool({ threads: 1, taskTimeoutMs: 1000 }, { filename: HOSTILE_WORKER, clock });
      let settled = false;
      const spinning = rejection(pool.prepare(hostile('spin'), LIMITS)).finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      clock.advance(999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      clock.advance(1);
      expect((await spinning).code).toBe('evaluation_request_validation_timeout');
      await expectServes(pool);
    });

    it('answers evaluation_request_validation_failed for a worker killed at its heap limit', async () => {
      const pool = await startedPool({ threads: 1, maxOldGenerationSizeMb: 16 }, { filename: HOSTILE_WORKER });
      const error = await rejection(pool.prepare(hostile('allocate'), LIMITS));
      expect(error.code).toBe('evaluation_request_validation_failed');
      await expectServes(pool);
    });

    it.each([['throws', 'throw'], ['exits', 'exit']] as const)('answers evaluation_request_validation_failed for a worker that %s, without its text', async (_name, mode) => {
      const pool = await startedPool({ threads: 1 }, { filename: HOSTILE_WORKER });
      const error = await rejection(pool.prepare(hostile(mode), LIMITS));
      expect(error.code).toBe('evaluation_request_validation_failed');
      expect(error.details).toBeUndefined();
      expect(error.message).not.toMatch(/secret|hostile/);
      await expectServes(pool);
    });
  });

  describe('destroy', () => {
    it('rejects pending preparations with evaluation_request_validation_unavailable and refuses new ones', async () => {
      const pool = await startedPool({ threads: 1 }, { filename: HOSTILE_WORKER });
      const pending = [rejection(pool.prepare(hostile('spin'), LIMITS)), rejection(pool.prepare(validSubmitRequest(), LIMITS))];
      expect(pool.pending).toBe(2);
      const destroyed = pool.destroy();
      expect(pool.pending).toBe(0);
      for (const error of await Promise.all(pending)) expect(error.code).toBe('evaluation_request_validation_unavailable');
      await destroyed;
      expect((await rejection(pool.prepare(validSubmitRequest(), LIMITS))).code).toBe('evaluation_request_validation_unavailable');
      expect((await rejection(pool.start())).code).toBe('evaluation_request_validation_unavailable');
      await expect(pool.destroy()).resolves.toBeUndefined();
    });

    it('ends a start that is still waiting for its first thread', async () => {
      const pool = newPool();
      const starting = rejection(pool.start());
      await pool.destroy();
      expect((await starting).code).toBe('evaluation_request_validation_unavailable');
      expect((await rejection(pool.prepare(validSubmitRequest(), LIMITS))).code).toBe('evaluation_request_validation_unavailable');
    });
  });
});
