import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpClient, HttpResult } from './http-client';

/** `examples/reference-eval.json`, parsed afresh on every call (tests change their copy). */
export function referenceEvalRequest(): Record<string, any> {
  return JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'examples', 'reference-eval.json'), 'utf8')) as Record<string, any>;
}

/** The ids of the reference eval set's cases, in order. */
export const REFERENCE_CASE_IDS = ['runbook-location', 'restart-procedure', 'on-call'] as const;

/** A job phase that ends a job. */
export const TERMINAL_PHASES = ['completed', 'failed', 'timed_out', 'cancelled'] as const;

/**
 * A request for the reference agent `agent` over `cases` cases of set `setId`, each with an
 * `expected_output`, so only `response_match` applies: long enough (hundreds of Runner runs) to stay
 * `running` while a test looks at it.
 */
export function longEvalRequest(setId: string, cases: number, agent = 'helper'): Record<string, unknown> {
  return {
    set: {
      id: setId,
      version: '1',
      cases: Array.from({ length: cases }, (_, index) => ({ case_id: `c${index}`, input: `question ${index}`, expected_output: 'Found it: see the runbook, section 2.' })),
    },
    agent,
    metrics: [{ name: 'response_match' }],
  };
}

/**
 * The `/evaluations` routes over a real socket. Every job it sees created (201) is remembered in
 * `created`, so a test can check that a listing shows each of them exactly once.
 */
export class EvaluationClient {
  readonly created: string[] = [];

  constructor(private readonly http: HttpClient) {}

  async submit(body: unknown, headers?: Record<string, string>): Promise<HttpResult> {
    const result = await this.http.send('/evaluations', { method: 'POST', body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), headers }).result;
    if (result.status === 201) this.created.push(result.body.job.job_id as string);
    return result;
  }

  /** Submits and expects 201; returns the job id. */
  async submitted(body: unknown): Promise<string> {
    const result = await this.submit(body);
    if (result.status !== 201) throw new Error(`submit answered ${result.status} ${result.text}`);
    return result.body.job.job_id as string;
  }

  status(jobId: string): Promise<HttpResult> {
    return this.http.send(`/evaluations/${jobId}`).result;
  }

  result(jobId: string): Promise<HttpResult> {
    return this.http.send(`/evaluations/${jobId}/result`).result;
  }

  cancel(jobId: string): Promise<HttpResult> {
    return this.http.send(`/evaluations/${jobId}/cancel`, { method: 'POST' }).result;
  }

  list(query = ''): Promise<HttpResult> {
    return this.http.send(`/evaluations${query}`).result;
  }

  putBaseline(evalSetId: string, name: string, body: unknown): Promise<HttpResult> {
    return this.http.send(`/evaluations/baselines/${evalSetId}/${name}`, { method: 'PUT', body: typeof body === 'string' ? body : JSON.stringify(body) }).result;
  }

  getBaseline(evalSetId: string, name: string): Promise<HttpResult> {
    return this.http.send(`/evaluations/baselines/${evalSetId}/${name}`).result;
  }

  compare(jobId: string, query: string): Promise<HttpResult> {
    return this.http.send(`/evaluations/jobs/${jobId}/compare?${query}`).result;
  }

  /** Polls `GET /evaluations/:jobId` until the job is in one of `phases`; returns that job record. */
  async waitForPhase(jobId: string, phases: readonly string[] = TERMINAL_PHASES, timeoutMs = 20_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await this.status(jobId);
      if (answer.status !== 200) throw new Error(`status answered ${answer.status} ${answer.text}`);
      if (phases.includes(answer.body.job.phase)) return answer.body.job;
      if (Date.now() > deadline) throw new Error(`job still ${answer.body.job.phase} after ${timeoutMs} ms`);
      await sleep(25);
    }
  }
}

/** The package's error body: `{status_code, error, code, details?}` with `status` as the HTTP status. */
export function expectError(result: HttpResult, status: number, code: string, details?: Record<string, unknown>): void {
  expect({ status: result.status, code: result.body?.code }).toEqual({ status, code });
  expect(result.body.status_code).toBe(status);
  expect(typeof result.body.error).toBe('string');
  if (details !== undefined) expect(result.body.details).toEqual(details);
}
