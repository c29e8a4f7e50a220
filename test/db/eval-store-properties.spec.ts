import fc from 'fast-check';
import { EvalServiceError } from '../../src/evaluation/eval.errors';
import type { EvalPhase, EvalTransitionFields } from '../../src/evaluation/eval.types';
import type { PostgresEvalStore } from '../../src/evaluation/store/postgres-eval-store';
import { evalResult, openEvalHarness, preparedRequest, recountUsage, usageRows, type EvalHarness } from '../support/eval-fixtures';

const PHASES: readonly EvalPhase[] = ['queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled'];
/** The lifecycle table of spec 05 §5, written out independently of the store's code. */
const LEGAL: Readonly<Record<EvalPhase, readonly EvalPhase[]>> = {
  queued: ['running', 'failed', 'cancelled'],
  running: ['completed', 'failed', 'timed_out', 'cancelled'],
  completed: [],
  failed: [],
  timed_out: [],
  cancelled: [],
};
const TERMINAL = new Set<EvalPhase>(['completed', 'failed', 'timed_out', 'cancelled']);
const SCOPE = Object.freeze({ app: 'prop' });

function fieldsFor(to: EvalPhase): EvalTransitionFields | undefined {
  if (to === 'completed') return { result: evalResult() };
  if (to === 'failed' || to === 'timed_out' || to === 'cancelled') return { reason: `reason_${to}` };
  return undefined;
}

async function reset(h: EvalHarness): Promise<void> {
  await h.sql('TRUNCATE agent_runtime_eval_baselines, agent_runtime_eval_jobs, agent_runtime_eval_set_revisions');
  await h.sql(`DELETE FROM agent_runtime_eval_usage WHERE scope_app <> ''`);
  await h.sql(`UPDATE agent_runtime_eval_usage SET sets = 0, jobs = 0, baselines = 0, bytes = 0`);
}

const codeOf = (error: unknown) => (EvalServiceError.isEvalServiceError(error) ? error.code : String(error));

describe('§11 invariants of the lifecycle (property-based, real Postgres)', () => {
  let h: EvalHarness;
  let store: PostgresEvalStore;

  beforeAll(async () => {
    h = await openEvalHarness();
    store = await h.store();
  });

  afterAll(async () => {
    await h.close();
  });

  it('only legal transitions commit, revision counts committed transitions, terminal phases absorb, a failed CAS changes nothing', async () => {
    const command = fc.record({
      job: fc.nat({ max: 2 }),
      expected: fc.subarray([...PHASES], { minLength: 1 }),
      to: fc.constantFrom(...PHASES),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 14, size: 'medium' }), async (commands) => {
        await reset(h);
        const jobs = await Promise.all([0, 1, 2].map(() => store.createEvaluation(SCOPE, preparedRequest())));
        const model = jobs.map(() => ({ phase: 'queued' as EvalPhase, revision: 0, terminalSeen: false }));
        for (const { job, expected, to } of commands) {
          const id = jobs[job].job_id;
          const state = model[job];
          const [before] = await h.sql('SELECT * FROM agent_runtime_eval_jobs WHERE job_id = $1', [id]);
          const legal = expected.includes(state.phase) && LEGAL[state.phase].includes(to);
          const outcome = await store.transition(SCOPE, id, expected, to, fieldsFor(to)).then(
            (record) => ({ ok: true as const, record }),
            (error: unknown) => ({ ok: false as const, code: codeOf(error) }),
          );
          if (legal) {
            expect(outcome.ok).toBe(true);
            if (!outcome.ok) return;
            expect(outcome.record).toMatchObject({ phase: to, revision: state.revision + 1 });
            expect(state.terminalSeen).toBe(false);
            state.phase = to;
            state.revision += 1;
            state.terminalSeen = TERMINAL.has(to);
          } else {
            expect(outcome).toEqual({ ok: false, code: expected.includes(state.phase) ? 'invalid_eval_job_transition' : 'stale_phase' });
            const [after] = await h.sql('SELECT * FROM agent_runtime_eval_jobs WHERE job_id = $1', [id]);
            expect(after).toEqual(before);
          }
        }
        for (const [i, job] of jobs.entries()) {
          const stored = await store.getJob(SCOPE, job.job_id);
          expect({ phase: stored.phase, revision: stored.revision }).toEqual({ phase: model[i].phase, revision: model[i].revision });
          expect(stored.finished_at_ms === null).toBe(!TERMINAL.has(stored.phase));
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe('§2.2 caps under concurrent writers (property-based, several connections)', () => {
  let h: EvalHarness;

  beforeAll(async () => {
    h = await openEvalHarness();
  });

  afterAll(async () => {
    await h.close();
  });

  it('concurrent createEvaluation calls from three pools never overshoot a cap, and every refusal is justified', async () => {
    const unit = preparedRequest();
    const perJob = unit.request_bytes;
    const perSet = unit.set_bytes;
    const caps = fc.record({
      maxJobs: fc.integer({ min: 1, max: 8 }),
      maxSets: fc.integer({ min: 1, max: 4 }),
      maxScopeBytes: fc.integer({ min: perSet + perJob, max: 3 * (perSet + perJob) }),
      maxTotalBytes: fc.integer({ min: perSet + perJob, max: 8 * (perSet + perJob) }),
    });
    const calls = fc.array(fc.record({ pool: fc.nat({ max: 2 }), app: fc.nat({ max: 2 }), version: fc.nat({ max: 3 }) }), { minLength: 2, maxLength: 14 });
    const stores = new Map<string, PostgresEvalStore[]>();
    const dataSources = await Promise.all([0, 1, 2].map(() => h.dataSource()));
    await fc.assert(
      fc.asyncProperty(caps, calls, async (options, planned) => {
        await reset(h);
        const key = JSON.stringify(options);
        if (!stores.has(key)) stores.set(key, await Promise.all(dataSources.map((dataSource) => h.store(options, {}, dataSource))));
        const pools = stores.get(key) as PostgresEvalStore[];
        const requests = planned.map((call) => ({ ...call, scope: { app: `app-${call.app}` }, request: preparedRequest({ set: { version: `v${call.version}` } }) }));
        const settled = await Promise.all(
          requests.map((call) =>
            pools[call.pool].createEvaluation(call.scope, call.request).then(
              () => 'ok',
              (error: unknown) => codeOf(error),
            ),
          ),
        );
        const usage = await usageRows(h);
        const counts = (await h.sql<{ jobs: string; sets: string }>(
          'SELECT (SELECT count(*) FROM agent_runtime_eval_jobs) AS jobs, (SELECT count(*) FROM agent_runtime_eval_set_revisions) AS sets',
        ))[0];
        const jobs = Number(counts.jobs);
        const sets = Number(counts.sets);
        expect(jobs).toBe(settled.filter((outcome) => outcome === 'ok').length);
        expect(jobs).toBeLessThanOrEqual(options.maxJobs);
        expect(sets).toBeLessThanOrEqual(options.maxSets);
        expect(usage[''].bytes).toBeLessThanOrEqual(options.maxTotalBytes);
        for (const [app, row] of Object.entries(usage)) if (app !== '') expect(row.bytes).toBeLessThanOrEqual(options.maxScopeBytes);
        expect(usage).toEqual(await recountUsage(h));
        const orphans = await h.sql(`SELECT 1 FROM agent_runtime_eval_set_revisions s WHERE NOT EXISTS (
          SELECT 1 FROM agent_runtime_eval_jobs j WHERE (j.scope_app, j.eval_set_id, j.eval_set_version) = (s.scope_app, s.eval_set_id, s.eval_set_version))`);
        expect(orphans).toEqual([]);
        // counters only grow during the run, so a refused request did not fit then and still does not
        const storedSets = new Set(
          (await h.sql<{ key: string }>(`SELECT scope_app || '/' || eval_set_version AS key FROM agent_runtime_eval_set_revisions`)).map((row) => row.key),
        );
        for (const [i, outcome] of settled.entries()) {
          const { scope, version } = requests[i];
          const added = perJob + (storedSets.has(`${scope.app}/v${version}`) ? 0 : perSet);
          if (outcome === 'ok') continue;
          if (outcome === 'eval_job_capacity_reached') expect(jobs).toBe(options.maxJobs);
          else if (outcome === 'eval_set_capacity_reached') expect(sets).toBe(options.maxSets);
          else if (outcome === 'eval_scope_bytes_exceeded') expect((usage[scope.app]?.bytes ?? 0) + added).toBeGreaterThan(options.maxScopeBytes);
          else if (outcome === 'eval_store_bytes_exceeded') expect(usage[''].bytes + added).toBeGreaterThan(options.maxTotalBytes);
          else throw new Error(`unexpected outcome ${outcome}`);
        }
      }),
      { numRuns: 25 },
    );
  });
});
