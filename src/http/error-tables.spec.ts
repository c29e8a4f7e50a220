import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { agentRuntimeErrorAnswer, httpErrorRule, type HttpErrorRule, type HttpMappedErrorClass } from './http-error-mapper';

const ROOT = join(__dirname, '..', '..');

type ErrorClass = (new (code: string, details?: object) => AgentRuntimeError<string>) & Partial<HttpMappedErrorClass>;

/** The source file of every entry point of the package (`exports` of package.json: `./dist/src/x/index.js` → `src/x/index.ts`). */
function entryPoints(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { exports } = require(join(ROOT, 'package.json')) as { exports: Record<string, string | { default?: string }> };
  return Object.values(exports)
    .map((target) => (typeof target === 'string' ? target : target.default))
    .filter((target): target is string => typeof target === 'string' && /^\.\/dist\/src\/.*\.js$/.test(target))
    .map((target) => target.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
}

/** Every `*.errors.ts` file of `src`, exported from an entry point or not: any of them can reach the filter. */
function errorsFiles(folder = join(ROOT, 'src')): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return errorsFiles(path);
    return entry.name.endsWith('.errors.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The classes extending `AgentRuntimeError` among the exports of `files`, by name. */
function errorClassesOf(files: readonly string[]): Map<string, ErrorClass> {
  const classes = new Map<string, ErrorClass>();
  for (const file of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    for (const value of Object.values(require(join(ROOT, file)) as Record<string, unknown>)) {
      if (typeof value === 'function' && value !== AgentRuntimeError && value.prototype instanceof AgentRuntimeError) classes.set(value.name, value as ErrorClass);
    }
  }
  return classes;
}

const ENTRY_POINTS = entryPoints();
const EXPORTED = errorClassesOf(ENTRY_POINTS);
const ALL = new Map([...errorClassesOf(errorsFiles()), ...EXPORTED]);

/** `Class.code status [Retry-After] [details]` for each code, answered without details. */
function answerLines(name: string, errorClass: ErrorClass): string[] {
  return (errorClass.codes ?? []).map((code) => {
    const answer = agentRuntimeErrorAnswer(new errorClass(code));
    const rule = httpErrorRule(errorClass.httpAnswers ?? {}, code, undefined) as HttpErrorRule;
    return [`${name}.${code}`, answer?.status, answer?.retryAfter ? 'Retry-After' : '', rule.details ? `details=${rule.details.join(',')}` : ''].filter(Boolean).join(' ');
  });
}

describe('the error tables: every code of every error class has an HTTP answer', () => {
  it('finds the entry points and their error classes', () => {
    expect(ENTRY_POINTS).toEqual(expect.arrayContaining(['src/index.ts', 'src/testing/index.ts', 'src/adapters/ai-sdk/index.ts', 'src/adapters/adk/index.ts']));
    expect([...EXPORTED.keys()]).toEqual(expect.arrayContaining(['AdmissionError', 'ClusterError', 'RuntimeServiceError', 'RunnerError', 'HttpRequestError', 'AdkAdapterError']));
  });

  it.each([...ALL.keys()].sort())('%s carries its own list of codes and a table with a rule for each, and nothing else', (name) => {
    const errorClass = ALL.get(name) as ErrorClass;
    expect(Object.hasOwn(errorClass, 'codes') && Object.hasOwn(errorClass, 'httpAnswers')).toBe(true);
    const codes = errorClass.codes as readonly string[];
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes).size).toBe(codes.length);
    expect(Object.isFrozen(codes) && Object.isFrozen(errorClass.httpAnswers)).toBe(true);
    expect(Object.keys(errorClass.httpAnswers as object).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      const error = new errorClass(code);
      expect({ code, isError: AgentRuntimeError.isAgentRuntimeError(error, errorClass), errorCode: error.code }).toEqual({ code, isError: true, errorCode: code });
      const answer = agentRuntimeErrorAnswer(error);
      expect({ code, status: answer?.status }).toEqual({ code, status: expect.any(Number) });
      expect(answer?.status).toBeGreaterThanOrEqual(400);
      expect(answer?.status).toBeLessThan(600);
      expect(answer?.body.code).toBe(code);
      // a client is asked to come back only for something that passes: an outage, a capacity, a limit
      if (answer?.retryAfter) expect([429, 503]).toContain(answer.status);
    }
  });

  it('pins the answer of every code (a change of status shows here)', () => {
    const lines = [...ALL.entries()].sort(([a], [b]) => a.localeCompare(b)).flatMap(([name, errorClass]) => answerLines(name, errorClass));
    expect(lines.join('\n')).toMatchSnapshot();
  });

  it.each([
    ['ClusterError', 'cluster_unavailable'],
    ['RuntimeServiceError', 'runtime_service_store_unavailable'],
    ['RuntimeServiceError', 'runtime_service_bundle_unavailable'],
    ['RuntimeServiceError', 'runtime_service_generation_stale'],
    ['RuntimeServiceError', 'memory_outbox_unavailable'],
    ['AdmissionError', 'admission_store_unavailable'],
    ['LedgerError', 'ledger_unavailable'],
  ])('%s %s is an outage: 503 with Retry-After', (name, code) => {
    const errorClass = ALL.get(name) as ErrorClass;
    expect(agentRuntimeErrorAnswer(new errorClass(code))).toMatchObject({ status: 503, retryAfter: true, body: { status_code: 503, error: 'Service Unavailable', code } });
  });

  it('answers an application subclass without a table of its own by its parent, and one without any table not at all', () => {
    const ClusterError = ALL.get('ClusterError') as ErrorClass;
    class AppClusterError extends ClusterError {}
    expect(agentRuntimeErrorAnswer(new AppClusterError('cluster_unavailable'))?.status).toBe(503);
    class AppError extends AgentRuntimeError<'mine'> {
      constructor() {
        super('AppError', 'mine');
      }
    }
    expect(agentRuntimeErrorAnswer(new AppError())).toBeUndefined();
  });
});
