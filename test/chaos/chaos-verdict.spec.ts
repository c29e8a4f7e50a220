import { judge, type InstanceObservations, type Observations } from './support/chaos-verdict';
import type { RecordedResponse } from './support/response-log';

const STOP = 1_000_000;
const ACCEPTING = STOP + 6000;
const EXERCISED = ['POST /agents/:agent/invoke', 'POST /runs', 'POST /runs/:id/confirmations/:callId', 'POST /evaluations', 'POST /chat/helper', 'POST /tools/search'];

const answer = (route: string, sentAtMs: number, status: number, code: string | null = null, retryAfter: string | null = null): RecordedResponse => ({
  instance: 'a',
  route,
  sentAtMs,
  elapsedMs: 5,
  status,
  code,
  retryAfter,
});

/** Samples every 200 ms from before the stop to the survey, all 200 unless `answer` says otherwise. */
const samples = (status: (atMs: number) => number = () => 200) =>
  Array.from({ length: 400 }, (_, index) => STOP - 5000 + index * 200).map((atMs) => ({ atMs, status: status(atMs), down: status(atMs) === 200 ? [] : ['evaluation'] }));

function healthy(overrides: Partial<Observations> = {}, instance: Partial<InstanceObservations> = {}): Observations {
  return {
    mode: 'default',
    settleMs: 60_000,
    blink: { stopRequestedAtMs: STOP, stoppedAtMs: STOP + 500, acceptingAtMs: ACCEPTING },
    loadStartedAtMs: STOP - 8000,
    loadEndedAtMs: STOP + 30_000,
    surveyedAtMs: ACCEPTING + 60_000,
    instances: [{ label: 'a', startPid: 7, pid: 7, unexpectedExit: undefined, live: samples(), ready: samples((at) => (at >= STOP && at < ACCEPTING + 3000 ? 503 : 200)), admission: { active: 0, queue: 0, waitedMs: 10 }, errorLines: [], ...instance }],
    responses: [
      ...EXERCISED.map((route) => answer(route, STOP - 1000, 200)),
      answer('POST /agents/:agent/invoke', STOP + 1000, 503, 'ledger_unavailable', '1'),
      answer('POST /agents/:agent/invoke', ACCEPTING + 1000, 200),
    ],
    runOutcomes: new Map(),
    jobOutcomes: new Map(),
    survey: { stuck: [], unknownColumns: [], unfinished: [], tables: ['agent_runtime_invocations'] },
    ...overrides,
  };
}

/** The verdict of the chaos suite: each assertion fires, with its numbers, and a healthy run passes. */
describe('chaos verdict', () => {
  test('a run that held every bound has no violation', () => {
    expect(judge(healthy()).violations).toEqual([]);
  });

  test('a 500, a 503 without code or Retry-After and a request without answer are violations; a 503 with both is not', () => {
    const base = healthy();
    const { violations } = judge({
      ...base,
      responses: [
        ...base.responses,
        answer('GET /policy/audit/verify', STOP + 100, 500, 'internal_error'),
        answer('POST /runs', STOP + 200, 503, null, '1'),
        answer('POST /runs', STOP + 300, 503, 'cluster_unavailable'),
        answer('GET /runs/:id', STOP + 400, 0, 'ECONNRESET'),
      ],
    });
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/^answers: 4 of 12 were 5xx/);
    expect(violations[0]).toContain('a: GET /policy/audit/verify 500 internal_error without Retry-After ×1');
    expect(violations[0]).toContain('a: POST /runs 503 (no code) ×1');
    expect(violations[0]).toContain('a: POST /runs 503 cluster_unavailable without Retry-After ×1');
    expect(violations[0]).toContain('a: GET /runs/:id no answer (ECONNRESET) ×1');
  });

  test('liveness down, readiness late or never back, a restart, admission not empty and stuck rows are each named with their numbers', () => {
    const { violations } = judge(
      healthy(
        { survey: { stuck: [{ table: 'agent_runtime_runs', what: 'status running', count: 3, holders: ['chaos-a'] }], unknownColumns: ['agent_runtime_x.claimed_by'], unfinished: [], tables: ['agent_runtime_runs'] } },
        {
          live: samples((at) => (at >= STOP + 2000 ? 503 : 200)),
          ready: samples((at) => (at >= STOP ? 503 : 200)),
          unexpectedExit: { atMs: STOP + 3000, code: 1, signal: null },
          admission: { active: 2, queue: 1, waitedMs: 20_000 },
        },
      ),
    );
    expect(violations).toEqual([
      expect.stringMatching(/^instance a \(pid 7\) exited during the run: code 1, signal null at \+3\.0 s after the stop$/),
      expect.stringMatching(/^instance a: \/health\/live answered non-200 in 365 of 400 polls \(503 down=\[evaluation\] ×365\), first \+2\.0 s/),
      expect.stringMatching(/^instance a: \/health\/ready not 200 within 15 s after Postgres accepted connections \(\+6\.0 s\): never 200 again/),
      'instance a: admission active 2, queue 1 20.0 s after the load ended (expected 0 and 0)',
      'rows 60 s after Postgres returned: agent_runtime_runs: 3 status running (held by chaos-a)',
      'rows: the survey has no rule for agent_runtime_x.claimed_by (add it to test/chaos/support/stuck-rows.ts)',
    ]);
  });

  test('readiness back after the bound is a violation naming the delay', () => {
    const { violations } = judge(healthy({}, { ready: samples((at) => (at >= STOP && at < ACCEPTING + 20_000 ? 503 : 200)) }));
    expect(violations).toEqual([expect.stringMatching(/first 200 again 20\.0 s after$/)]);
  });

  test('a load that never reached a route, or sent nothing during the outage, fails the run', () => {
    const base = healthy();
    const { violations } = judge({ ...base, responses: base.responses.filter((r) => r.route !== 'POST /evaluations' && r.sentAtMs !== STOP + 1000) });
    expect(violations).toEqual(['load: no 2xx answer of POST /evaluations before the blink (the load did not exercise it)', 'load: no request was sent while Postgres was down']);
  });
});
