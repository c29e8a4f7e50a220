import type { BlinkTimes } from './chaos-postgres';
import type { ProbeSample } from './health-poller';
import type { RecordedResponse } from './response-log';
import type { UnexpectedExit } from './service-process';
import type { RowSurvey } from './stuck-rows';

/** The bounds the suite holds the service to (issue 23, item 9). */
export const BOUNDS = Object.freeze({
  /** `/health/ready` answers 200 again within this long after Postgres accepts connections. */
  readyWithinMs: 15_000,
});

/** What one instance went through. */
export interface InstanceObservations {
  readonly label: string;
  readonly startPid: number;
  readonly pid: number;
  readonly unexpectedExit: UnexpectedExit | undefined;
  readonly live: readonly ProbeSample[];
  readonly ready: readonly ProbeSample[];
  /** The last `GET /admission/status` numbers after the load ended (null: it never answered 200). */
  readonly admission: { active: number; queue: number; waitedMs: number } | null;
  /** ERROR and WARN lines of its log. */
  readonly errorLines: string[];
}

/** Everything a chaos run observed. */
export interface Observations {
  readonly mode: string;
  readonly settleMs: number;
  readonly blink: BlinkTimes;
  readonly loadStartedAtMs: number;
  readonly loadEndedAtMs: number;
  readonly surveyedAtMs: number;
  readonly instances: readonly InstanceObservations[];
  readonly responses: readonly RecordedResponse[];
  readonly runOutcomes: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly jobOutcomes: ReadonlyMap<string, number>;
  readonly survey: RowSurvey;
}

/** Routes whose successful answers show that the load really ran before the blink. */
const EXERCISED_ROUTES = ['POST /agents/:agent/invoke', 'POST /runs', 'POST /runs/:id/confirmations/:callId', 'POST /evaluations', 'POST /chat/helper', 'POST /tools/search'];

/**
 * The violations of the chaos assertions, each with its numbers, and a report of the whole run
 * (timeline, answers per route and status, run and job outcomes, log errors).
 */
export function judge(o: Observations): { violations: string[]; report: string } {
  const at = (ms: number) => `${ms >= o.blink.stopRequestedAtMs ? '+' : ''}${((ms - o.blink.stopRequestedAtMs) / 1000).toFixed(1)} s`;
  const violations = [
    ...loadRan(o),
    ...serverErrors(o, at),
    ...o.instances.flatMap((instance) => [...restarts(instance, at), ...liveness(instance, at), ...readiness(instance, o, at), ...admission(instance)]),
    ...stuckRows(o),
  ];
  return { violations, report: report(o, at) };
}

/** The routes of {@link EXERCISED_ROUTES} without a 2xx answer to a request sent before `beforeMs`. */
export function unexercisedRoutes(responses: readonly RecordedResponse[], beforeMs: number): string[] {
  const exercised = new Set(responses.filter((r) => r.status >= 200 && r.status < 300 && r.sentAtMs < beforeMs).map((r) => r.route));
  return EXERCISED_ROUTES.filter((route) => !exercised.has(route));
}

function loadRan(o: Observations): string[] {
  const violations = unexercisedRoutes(o.responses, o.blink.stopRequestedAtMs).map((route) => `load: no 2xx answer of ${route} before the blink (the load did not exercise it)`);
  const during = o.responses.filter((r) => r.sentAtMs >= o.blink.stopRequestedAtMs && r.sentAtMs < o.blink.acceptingAtMs).length;
  if (during === 0) violations.push('load: no request was sent while Postgres was down');
  const invokedAfter = o.responses.filter((r) => r.route === 'POST /agents/:agent/invoke' && r.status === 200 && r.sentAtMs >= o.blink.acceptingAtMs).length;
  if (invokedAfter === 0) violations.push('load: no invoke answered 200 after Postgres accepted connections again');
  return violations;
}

/** Every 5xx other than 503 with a `code` and `Retry-After`, and every request without an answer, grouped. */
function serverErrors(o: Observations, at: (ms: number) => string): string[] {
  const bad = o.responses.filter((r) => r.status === 0 || (r.status >= 500 && !(r.status === 503 && r.code !== null && r.retryAfter !== null)));
  if (bad.length === 0) return [];
  const groups = new Map<string, RecordedResponse[]>();
  for (const r of bad) {
    const what = r.status === 0 ? `no answer (${r.code})` : `${r.status} ${r.code ?? '(no code)'}${r.retryAfter === null ? ' without Retry-After' : ''}`;
    const key = `${r.instance}: ${r.route} ${what}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const lines = [...groups].map(([key, rs]) => `${key} ×${rs.length} (sent ${at(Math.min(...rs.map((r) => r.sentAtMs)))}..${at(Math.max(...rs.map((r) => r.sentAtMs)))} after the stop)`);
  return [`answers: ${bad.length} of ${o.responses.length} were 5xx other than 503 with a code and Retry-After, or no answer: ${lines.join('; ')}`];
}

function restarts(instance: InstanceObservations, at: (ms: number) => string): string[] {
  const exit = instance.unexpectedExit;
  if (!exit && instance.pid === instance.startPid) return [];
  return [`instance ${instance.label} (pid ${instance.startPid}) exited during the run: code ${exit?.code ?? null}, signal ${exit?.signal ?? null} at ${exit ? at(exit.atMs) : '?'} after the stop`];
}

function liveness(instance: InstanceObservations, at: (ms: number) => string): string[] {
  const failed = instance.live.filter((sample) => sample.status !== 200);
  if (failed.length === 0 && instance.live.length > 0) return [];
  if (instance.live.length === 0) return [`instance ${instance.label}: /health/live was never polled`];
  const answers = countBy(failed.map((sample) => `${sample.status || 'no answer'}${sample.down.length ? ` down=[${sample.down.join(',')}]` : ''}`));
  return [
    `instance ${instance.label}: /health/live answered non-200 in ${failed.length} of ${instance.live.length} polls (${answers}), first ${at(failed[0].atMs)}, last ${at(failed[failed.length - 1].atMs)} after the stop`,
  ];
}

function readiness(instance: InstanceObservations, o: Observations, at: (ms: number) => string): string[] {
  const back = instance.ready.find((sample) => sample.atMs >= o.blink.acceptingAtMs && sample.status === 200);
  if (back && back.atMs - o.blink.acceptingAtMs <= BOUNDS.readyWithinMs) return [];
  const within = `within ${BOUNDS.readyWithinMs / 1000} s after Postgres accepted connections (${at(o.blink.acceptingAtMs)})`;
  if (back) return [`instance ${instance.label}: /health/ready not 200 ${within}: first 200 again ${((back.atMs - o.blink.acceptingAtMs) / 1000).toFixed(1)} s after`];
  const last = instance.ready.at(-1);
  const lastAnswer = last ? `${last.status || 'no answer'}${last.down.length ? ` down=[${last.down.join(',')}]` : ''} at ${at(last.atMs)}` : 'none';
  return [`instance ${instance.label}: /health/ready not 200 ${within}: never 200 again in the ${((o.surveyedAtMs - o.blink.acceptingAtMs) / 1000).toFixed(0)} s observed; last answer ${lastAnswer}`];
}

function admission(instance: InstanceObservations): string[] {
  const state = instance.admission;
  if (state && state.active === 0 && state.queue === 0) return [];
  if (!state) return [`instance ${instance.label}: GET /admission/status never answered 200 after the load ended`];
  return [`instance ${instance.label}: admission active ${state.active}, queue ${state.queue} ${(state.waitedMs / 1000).toFixed(1)} s after the load ended (expected 0 and 0)`];
}

function stuckRows(o: Observations): string[] {
  const after = `${((o.surveyedAtMs - o.blink.acceptingAtMs) / 1000).toFixed(0)} s after Postgres returned`;
  const violations = o.survey.stuck.map(
    (rows) => `rows ${after}: ${rows.table}: ${rows.count} ${rows.what}${rows.holders.length ? ` (held by ${rows.holders.join(', ')})` : ''}`,
  );
  if (o.survey.unknownColumns.length > 0) violations.push(`rows: the survey has no rule for ${o.survey.unknownColumns.join(', ')} (add it to test/chaos/support/stuck-rows.ts)`);
  if (o.survey.tables.length === 0) violations.push('rows: the survey found no agent_runtime_* table with a state or owner column');
  return violations;
}

function report(o: Observations, at: (ms: number) => string): string {
  const lines = [
    `chaos ${o.mode}: load from ${at(o.loadStartedAtMs)}; Postgres stopped at +0.0 s (exited ${at(o.blink.stoppedAtMs)}), accepting again ${at(o.blink.acceptingAtMs)}; load ended ${at(o.loadEndedAtMs)}; rows surveyed ${at(o.surveyedAtMs)}`,
    `answers (${o.responses.length}) by when they were sent: before the stop | while Postgres was down | after it accepted connections:`,
  ];
  const byRoute = new Map<string, RecordedResponse[]>();
  for (const r of o.responses) byRoute.set(r.route, [...(byRoute.get(r.route) ?? []), r]);
  const answerOf = (r: RecordedResponse) => (r.status === 0 ? `no answer ${r.code}` : `${r.status}${r.status >= 400 && r.code ? ` ${r.code}` : ''}`);
  const windows: Array<[string, (r: RecordedResponse) => boolean]> = [
    ['before', (r) => r.sentAtMs < o.blink.stopRequestedAtMs],
    ['down', (r) => r.sentAtMs >= o.blink.stopRequestedAtMs && r.sentAtMs < o.blink.acceptingAtMs],
    ['after', (r) => r.sentAtMs >= o.blink.acceptingAtMs],
  ];
  for (const [route, rs] of [...byRoute].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  ${route}: ${windows.map(([name, inside]) => `${name} ${countBy(rs.filter(inside).map(answerOf))}`).join(' | ')}`);
  }
  lines.push(`runs (last status seen): ${[...o.runOutcomes].map(([key, counts]) => `${key} ${mapText(counts)}`).join('; ')}`);
  lines.push(`evaluation jobs (last phase seen): ${mapText(o.jobOutcomes)}`);
  lines.push(`rows in other unfinished states: ${o.survey.unfinished.map((row) => `${row.table} ${row.state} ${row.count}`).join(', ') || 'none'}`);
  for (const instance of o.instances) {
    const downSamples = instance.ready.filter((sample) => sample.status !== 200);
    lines.push(
      `instance ${instance.label} (pid ${instance.startPid}): ready non-200 in ${downSamples.length} of ${instance.ready.length} polls (${countBy(downSamples.map((sample) => sample.down.join(',') || String(sample.status)))}); ${instance.errorLines.length} ERROR/WARN log lines`,
    );
    for (const [line, count] of topLines(instance.errorLines, 8)) lines.push(`    ×${count} ${line}`);
  }
  return lines.join('\n');
}

function countBy(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return mapText(counts);
}

function mapText(counts: ReadonlyMap<string, number>): string {
  return [...counts].sort(([, a], [, b]) => b - a).map(([value, count]) => `${value} ×${count}`).join(', ') || 'none';
}

/** The most frequent log lines with timestamps, pids and ids blanked, so repeats count as one. */
function topLines(lines: readonly string[], limit: number): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const shape = line
      .replace(/^\[Nest\]\s+\d+\s+-\s+.*?\s{2,}/, '')
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '<id>')
      .replace(/\+\d+ms$/, '')
      .replace(/\b\d+\b/g, 'N')
      .slice(0, 200);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  return [...counts].sort(([, a], [, b]) => b - a).slice(0, limit);
}
