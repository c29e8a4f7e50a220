import * as path from 'node:path';
import type { DataSource } from 'typeorm';
import { readMigrationStatus } from '../database/migration-status';
import { runEvalGate, type EvalGateAgents, type EvalGateAgentsFactory } from '../evaluation/eval-gate';
import { EvalServiceError } from '../evaluation/eval.errors';
import { toleranceOf } from '../evaluation/evaluation-http-params';
import type { EvalRegressionReport } from '../evaluation/executor/regression-report';
import { PostgresEvalStore } from '../evaluation/store/postgres-eval-store';
import { databaseUrlOf, parseCommand } from './cli-arguments';
import { withDataSource, type CliCommand } from './cli-command';
import { CliExit, CliFailure, usageFailure } from './cli-failure';

const REQUIRED = ['app', 'set', 'baseline', 'agent', 'agents'] as const;

/** `eval-gate`: runs a stored baseline's eval set through a candidate agent and fails on a regression. */
export const evalGateCommand: CliCommand = {
  name: 'eval-gate',
  summary: 'run a baseline\'s eval set through a candidate agent (exit 1 when it regressed)',
  help: [
    'usage: nest-agent-runtime eval-gate --app <app> --set <eval set id> --baseline <name> --agent <agent>',
    '                                   --agents <module> [--tolerance 0..1] [--url <postgres url>]',
    '',
    'Reads the baseline of the eval set in the app\'s scope, runs the set revision its job ran through the',
    'candidate agent in this process (with the baseline\'s metrics and options) and compares. Reads only:',
    'it works beside a running service that owns the evaluation store, and stores no job. Prints the',
    'regression report as JSON on stdout.',
    '',
    'options:',
    '  --app <app>          the evaluation scope: the app name your resolveScope returns',
    '  --set <id>           the eval set',
    '  --baseline <name>    the baseline to compare with',
    '  --agent <agent>      the candidate: an agent of the --agents registry',
    '  --agents <module>    a JavaScript module exporting evalGateAgents (or a default export): a function',
    '                       ({databaseUrl}) => {registry, close?} (see EvalGateAgentsFactory)',
    '  --tolerance <0..1>   how far a metric may drop below the baseline (default 0)',
    '  --url <url>          the database (default: DATABASE_URL)',
    '',
    'exit: 0 no regression, 1 regressed or the candidate could not finish, 2 usage (also: no such set,',
    'baseline or agent), 3 database unreachable or schema problem',
  ].join('\n'),
  async run(args, env, io) {
    const { values } = parseCommand(args, { strings: ['url', 'tolerance', ...REQUIRED] });
    const missing = REQUIRED.filter((name) => values[name] === undefined);
    if (missing.length > 0) throw usageFailure('missing_argument', `eval-gate needs ${missing.map((name) => `--${name}`).join(', ')}`);
    const tolerance = toleranceArgument(values.tolerance);
    const url = databaseUrlOf(values.url, env);
    const report = await withDataSource(url, ['evaluation'], async (dataSource) => {
      await assertEvaluationMigrated(dataSource);
      const agents = await loadAgents(path.resolve(io.cwd, values.agents as string), url);
      try {
        return await runEvalGate(new PostgresEvalStore(dataSource), agents.registry, {
          scope: { app: values.app as string },
          evalSetId: values.set as string,
          baseline: values.baseline as string,
          agent: values.agent as string,
          tolerance,
        }).catch(gateFailure);
      } finally {
        await Promise.resolve(agents.close?.()).catch(() => undefined);
      }
    });
    io.out(JSON.stringify(report, null, 2));
    if (!report.regressed) return CliExit.ok;
    throw new CliFailure('eval_regressed', `the candidate regressed against the baseline: ${regressedMetrics(report)}`, CliExit.checkFailed);
  },
};

function toleranceArgument(text: string | undefined): number {
  try {
    return text === undefined ? 0 : toleranceOf(text);
  } catch {
    throw usageFailure('invalid_arguments', '--tolerance must be a decimal in 0..1, such as 0.05');
  }
}

async function assertEvaluationMigrated(dataSource: DataSource): Promise<void> {
  const [evaluation] = (await readMigrationStatus(dataSource, ['evaluation'])).groups;
  if (evaluation.pending.length > 0) {
    throw new CliFailure('schema_mismatch', 'the evaluation tables are not migrated: run nest-agent-runtime migrate --modules evaluation', CliExit.unavailable);
  }
}

/** The `--agents` module's registry; a module that cannot be loaded, or exports no factory, is a usage failure. */
async function loadAgents(file: string, databaseUrl: string): Promise<EvalGateAgents> {
  let factory: unknown;
  try {
    // a user's module: CommonJS, or ESM without top-level await (Node >= 20.19 loads both with require)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require(file) as { evalGateAgents?: unknown; default?: unknown };
    factory = loaded.evalGateAgents ?? loaded.default;
  } catch (error) {
    throw usageFailure('agents_module_failed', `the --agents module could not be loaded (${errorName(error)})`);
  }
  if (typeof factory !== 'function') throw usageFailure('agents_module_failed', 'the --agents module exports no evalGateAgents function (nor a default one)');
  let agents: EvalGateAgents;
  try {
    agents = await (factory as EvalGateAgentsFactory)({ databaseUrl });
  } catch (error) {
    throw usageFailure('agents_module_failed', `the --agents function failed (${errorName(error)})`);
  }
  if (typeof agents?.registry?.getRunner !== 'function') throw usageFailure('agents_module_failed', 'the --agents function returned no registry with getRunner(agent)');
  return agents;
}

/** The gate's own codes as the bin reports them; any other failure goes on to the general mapping. */
function gateFailure(error: unknown): never {
  if (EvalServiceError.isEvalServiceError(error)) {
    if (error.code === 'not_found') throw usageFailure('not_found', 'the eval set or the baseline does not exist in the --app scope');
    if (error.code === 'evaluation_job_terminal' && error.details?.reason === 'unknown_eval_agent') {
      throw usageFailure('unknown_eval_agent', 'the --agents registry has no agent named by --agent');
    }
    if (error.code === 'evaluation_job_terminal') throw new CliFailure('eval_failed', `the candidate run did not complete (${String(error.details?.reason)})`, CliExit.checkFailed);
    if (error.code.startsWith('invalid_eval')) throw usageFailure('invalid_arguments', `${error.code}: an argument is not a valid name`);
  }
  throw error;
}

function regressedMetrics(report: EvalRegressionReport): string {
  const names = Object.entries(report.metrics).filter(([, metric]) => metric.regressed).map(([name]) => name);
  return names.length === 0 ? `${report.cases.length} case(s) regressed` : `${names.join(', ')} regressed`;
}

function errorName(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code)) return code;
  return error instanceof Error && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.name) ? error.name : 'unknown';
}
