import { resolveLedgerOptions } from './ledger-options';
import { LedgerError } from './ledger.errors';
import { defaultSanitizeTerminalOutcome } from './outcome-projection';

describe('ledger options', () => {
  it('applies the defaults of spec 04 §8', () => {
    const options = resolveLedgerOptions(undefined);
    expect(options).toMatchObject({
      schema: null,
      tableName: 'agent_runtime_invocations',
      defaultLeaseMs: 30_000,
      maxDocumentBytes: 16 * 1024 * 1024,
      connectRetries: 2,
      requireSynchronousStandby: false,
      sanitizeTerminalOutcome: defaultSanitizeTerminalOutcome,
    });
    expect(options.instanceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(resolveLedgerOptions({}).instanceId).not.toBe(options.instanceId);
    expect(Object.isFrozen(options)).toBe(true);
  });

  it('keeps valid values', () => {
    const sanitize = () => ({ reason: 'x' });
    const options = resolveLedgerOptions({
      schema: 'tenant_a',
      tableName: 'a'.repeat(44),
      instanceId: 'host-1.pod:a_b',
      defaultLeaseMs: 86_400_000,
      maxDocumentBytes: 1,
      connectRetries: 0,
      requireSynchronousStandby: true,
      sanitizeTerminalOutcome: sanitize,
    });
    expect(options).toMatchObject({ schema: 'tenant_a', instanceId: 'host-1.pod:a_b', connectRetries: 0, sanitizeTerminalOutcome: sanitize });
  });

  it.each<[string, unknown, string[]]>([
    ['not an object', 'x', ['options']],
    ['an array', [], ['options']],
    ['a class instance', new (class Options {})(), ['options']],
    ['a throwing proxy', new Proxy({}, { ownKeys: () => { throw new Error('x'); } }), ['options']],
    ['an unknown key, named', { leaseMs: 1 }, ['leaseMs']],
    ['dataSourceName (a module option)', { dataSourceName: 'x' }, ['dataSourceName']],
    ['a symbol key', { [Symbol('x')]: 1 }, ['unknown']],
    ['an upper-case schema', { schema: 'Public' }, ['schema']],
    ['a 45-character table name', { tableName: 'a'.repeat(45) }, ['tableName']],
    ['a table name with a quote', { tableName: 'a"b' }, ['tableName']],
    ['an instanceId with a space', { instanceId: 'a b' }, ['instanceId']],
    ['a 129-character instanceId', { instanceId: 'a'.repeat(129) }, ['instanceId']],
    ['defaultLeaseMs 0', { defaultLeaseMs: 0 }, ['defaultLeaseMs']],
    ['maxDocumentBytes above 2^28 - 1', { maxDocumentBytes: 2 ** 28 }, ['maxDocumentBytes']],
    ['connectRetries 11', { connectRetries: 11 }, ['connectRetries']],
    ['a string requireSynchronousStandby', { requireSynchronousStandby: 'yes' }, ['requireSynchronousStandby']],
    ['a non-function sanitizer', { sanitizeTerminalOutcome: {} }, ['sanitizeTerminalOutcome']],
    ['a getter', Object.defineProperty({}, 'tableName', { get: () => 't', enumerable: true }), ['tableName']],
    ['several, sorted', { tableName: '', instanceId: '', extra: 1 }, ['extra', 'instanceId', 'tableName']],
    ['a key that is not an identifier', { 'a\nb': 1 }, ['unknown']],
  ])('%s is invalid_ledger_options naming every bad option', (_name, options, names) => {
    let error: unknown;
    try {
      resolveLedgerOptions(options);
    } catch (caught) {
      error = caught;
    }
    expect(LedgerError.isLedgerError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'invalid_ledger_options', details: names.length === 1 ? { field: names[0] } : { fields: names } });
  });
});
