import { inspect } from 'node:util';
import { asStartupReport, failureReportLines } from './failure-report';
import { SchemaValidatorError } from './schema-validator.errors';

const startupFailureLines = (error: unknown) => failureReportLines('reference service failed to start:', error);

const mismatches = [
  { table: 'agent_runtime_policy_audit_log', property: 'trigger:agent_runtime_policy_audit_log_no_change', expected: 'before update or delete for each row execute f()', actual: 'disabled' },
  { table: null, property: 'synchronous_commit', expected: 'not off', actual: 'off' },
] as const;

describe('failureReportLines', () => {
  it('prints the code, then every mismatch as one JSON line {table, property, expected, actual}', () => {
    const lines = startupFailureLines(new SchemaValidatorError('schema_mismatch', { mismatches }));
    expect(lines).toEqual([
      'reference service failed to start: schema_mismatch {"mismatches":2}',
      '{"table":"agent_runtime_policy_audit_log","property":"trigger:agent_runtime_policy_audit_log_no_change","expected":"before update or delete for each row execute f()","actual":"disabled"}',
      '{"table":null,"property":"synchronous_commit","expected":"not off","actual":"off"}',
    ]);
    expect(lines.slice(1).map((line) => JSON.parse(line))).toEqual(mismatches);
  });

  it('prints a deleted migration row reported before migrations run as its mismatch', () => {
    const mismatch = { table: 'agent_runtime_migrations', property: 'migration:PolicyAuditLog1764400000000' as const, expected: 'applied', actual: 'missing row, tables present' };
    expect(startupFailureLines(new SchemaValidatorError('schema_mismatch', { mismatches: [mismatch] }))).toEqual([
      'reference service failed to start: schema_mismatch {"mismatches":1}',
      JSON.stringify(mismatch),
    ]);
  });

  it('keeps an error without mismatches on one line with its scalar details', () => {
    const error = new SchemaValidatorError('database_unreachable', { attempts: 3, sqlstate: null, socket_error: 'ECONNREFUSED' });
    expect(startupFailureLines(error)).toEqual([
      'reference service failed to start: database_unreachable {"attempts":3,"sqlstate":null,"socket_error":"ECONNREFUSED"}',
    ]);
  });

  it('never prints the text of a foreign (driver) error: only its class name and codes', () => {
    const driver = Object.assign(new Error('relation "agent_runtime_policy_audit_log" already exists; password=hunter2'), { code: '42P07' });
    const wrapped = Object.assign(new Error('QueryFailedError: relation already exists'), { name: 'QueryFailedError', driverError: driver });
    expect(startupFailureLines(wrapped)).toEqual(['reference service failed to start: QueryFailedError sqlstate 42P07']);
    expect(startupFailureLines(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toEqual([
      'reference service failed to start: Error socket_error ECONNREFUSED',
    ]);
    expect(startupFailureLines('a string')).toEqual(['reference service failed to start: unexpected_error']);
    expect(startupFailureLines(Object.assign(new Error('x'), { name: 'Bad\nName' }))).toEqual(['reference service failed to start: unexpected_error']);
  });

  it('escapes control characters and line separators taken from the catalog, so each mismatch stays one line', () => {
    const hostile = { table: 't', property: 'trigger:a\nb\u001b[31m' as const, expected: 'absent', actual: 'x\u0085y\u2028z' };
    const [, line] = startupFailureLines(new SchemaValidatorError('schema_mismatch', { mismatches: [hostile] }));
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(JSON.parse(line)).toEqual(hostile);
  });

  it('leads a mismatch that names its module with "module"', () => {
    const mismatch = { module: 'ledger', table: 'agent_runtime_invocations', property: 'column:outcome', expected: 'jsonb null', actual: 'missing' };
    const [, line] = startupFailureLines(new SchemaValidatorError('schema_mismatch', { mismatches: [mismatch as never] }));
    expect(line).toBe('{"module":"ledger","table":"agent_runtime_invocations","property":"column:outcome","expected":"jsonb null","actual":"missing"}');
  });
});

describe('asStartupReport', () => {
  const mismatches = [
    { module: 'ledger', table: 'agent_runtime_invocations', property: 'column:outcome', expected: 'jsonb null', actual: 'missing' },
    { module: 'evaluation', table: 'agent_runtime_eval_jobs', property: 'column:agent', expected: 'text not null', actual: 'missing' },
  ];

  it('makes the stack and what util.inspect prints the report: the code, then each mismatch, and no frame', () => {
    const error = asStartupReport(new SchemaValidatorError('schema_mismatch', { mismatches: mismatches as never }));
    const report = [
      'SchemaValidatorError: schema_mismatch {"mismatches":2}',
      ...mismatches.map((mismatch) => JSON.stringify(mismatch)),
    ].join('\n');
    expect(error.stack).toBe(report);
    expect(inspect(error)).toBe(report);
    expect(inspect({ cause: error })).not.toMatch(/^\s+at /m);
    // what an operator command prints is unchanged
    expect(startupFailureLines(error)[0]).toBe('reference service failed to start: schema_mismatch {"mismatches":2}');
  });
});
