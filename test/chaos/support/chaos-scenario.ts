import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChaosPostgres, type BlinkTimes } from './chaos-postgres';
import { HealthPoller } from './health-poller';
import { MixedLoad } from './mixed-load';
import { ResponseLog } from './response-log';
import { ServiceProcess } from './service-process';
import { surveyRows, type RowSurvey } from './stuck-rows';
import { judge, unexercisedRoutes, type Observations } from './chaos-verdict';

/** The shape of one chaos run. */
export interface ChaosSettings {
  /** `default`: one process; `cluster`: `CLUSTER=1` with one process per label, each its own `INSTANCE_ID`. */
  readonly mode: 'default' | 'cluster';
  readonly labels: readonly string[];
  /** Load before the blink, at least; longer until every route of the load has answered 2xx (at most 30 s more). @default 8000 */
  readonly warmUpMs?: number;
  /** How long Postgres is down. @default 5000 */
  readonly downMs?: number;
  /** Load after Postgres accepts connections again. @default 20000 */
  readonly loadAfterMs?: number;
  /** How long runs and jobs in flight are still followed once the load stops. @default 20000 */
  readonly followMs?: number;
  /** When the rows are surveyed, after Postgres accepts connections again. @default 60000 */
  readonly settleMs?: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The reference service (one process, or a cluster of processes on one database) under the mixed
 * load while its Postgres is stopped (fast shutdown) and started again; everything observed goes
 * to {@link judge}. Resolves the report and its violations. After a failure the service logs, the
 * report and every recorded answer (`responses.jsonl`) stay in a temp directory the report names;
 * after a pass that directory is removed.
 */
export async function runChaos(settings: ChaosSettings): Promise<{ violations: string[]; report: string }> {
  const { warmUpMs = 8000, downMs = 5000, loadAfterMs = 20_000, followMs = 20_000, settleMs = 60_000 } = settings;
  const logDir = await fs.mkdtemp(join(tmpdir(), `nest-agent-runtime-chaos-${settings.mode}-`));
  const postgres = await ChaosPostgres.start();
  const services: ServiceProcess[] = [];
  const pollers: HealthPoller[] = [];
  let load: MixedLoad | undefined;
  let passed = false;
  try {
    await Promise.all(
      settings.labels.map(async (label) => {
        const instance = settings.mode === 'cluster' ? { instanceId: `chaos-${label}` } : {};
        services.push(await ServiceProcess.start({ label, databaseUrl: postgres.url, logFile: join(logDir, `${label}.log`), ...instance }));
      }),
    );
    services.sort((a, b) => a.label.localeCompare(b.label));
    const pids = services.map((service) => service.pid);
    pollers.push(...services.map((service) => new HealthPoller(service)));
    const responses = new ResponseLog();
    load = new MixedLoad(responses, services);
    const loadStartedAtMs = Date.now();
    await pause(warmUpMs);
    // every kind of work is under way before the blink (a busy machine may need longer), within a bound
    for (const deadline = Date.now() + 30_000; unexercisedRoutes(responses.records, Date.now()).length > 0 && Date.now() < deadline; ) await pause(250);
    const blink: BlinkTimes = await postgres.blink(downMs);
    await pause(loadAfterMs);
    await load.stop(followMs);
    const loadEndedAtMs = Date.now();
    const admission = await Promise.all(services.map((service) => admissionSettled(responses, service, 20_000)));
    await pause(blink.acceptingAtMs + settleMs - Date.now());
    const survey: RowSurvey = await surveyRows(postgres.url);
    const surveyedAtMs = Date.now();
    await Promise.all(pollers.map((poller) => poller.stop()));
    const observations: Observations = {
      mode: settings.mode,
      settleMs,
      blink,
      loadStartedAtMs,
      loadEndedAtMs,
      surveyedAtMs,
      instances: services.map((service, index) => ({
        label: service.label,
        startPid: pids[index],
        pid: service.pid,
        unexpectedExit: service.unexpectedExit,
        live: pollers[index].live,
        ready: pollers[index].ready,
        admission: admission[index],
        errorLines: [],
      })),
      responses: responses.records,
      runOutcomes: load.runOutcomes,
      jobOutcomes: load.jobOutcomes,
      survey,
    };
    for (const instance of observations.instances) instance.errorLines.push(...(await errorLinesOf(join(logDir, `${instance.label}.log`))));
    const { violations, report } = judge(observations);
    passed = violations.length === 0;
    if (passed) return { violations, report };
    const full = `${report}\nservice logs, report.txt and every answer (responses.jsonl): ${logDir}`;
    await fs.writeFile(join(logDir, 'responses.jsonl'), responses.records.map((record) => JSON.stringify(record)).join('\n'));
    await fs.writeFile(join(logDir, 'report.txt'), `${full}\n\nviolations:\n${violations.join('\n')}\n`);
    return { violations, report: full };
  } finally {
    // idempotent: after a failure mid-way nothing of the run may keep the test process alive
    await load?.stop(0);
    await Promise.all(pollers.map((poller) => poller.stop()));
    await Promise.all(services.map((service) => service.stop(15_000)));
    await postgres.destroy();
    if (passed) await fs.rm(logDir, { recursive: true, force: true });
  }
}

/** `GET /admission/status` until active and queue are 0, at most `withinMs`; the last answer's numbers. */
async function admissionSettled(responses: ResponseLog, service: ServiceProcess, withinMs: number): Promise<{ active: number; queue: number; waitedMs: number } | null> {
  const startedAt = Date.now();
  let last: { active: number; queue: number; waitedMs: number } | null = null;
  do {
    const answer = await responses.send(service, 'GET /admission/status', '/admission/status');
    if (answer.status === 200) {
      last = { active: Number(answer.body.active), queue: Number(answer.body.queue_length), waitedMs: Date.now() - startedAt };
      if (last.active === 0 && last.queue === 0) return last;
    }
    await pause(250);
  } while (Date.now() - startedAt < withinMs);
  return last;
}

/** The ERROR and WARN lines of a service log, without colours. */
async function errorLinesOf(file: string): Promise<string[]> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((line) => /\b(ERROR|WARN)\b/.test(line));
}
