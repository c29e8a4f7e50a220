import { toInvocationRecord, type InvocationRow } from './invocation-record';

const row: InvocationRow = {
  id: 'inv',
  workflow_id: 'w',
  workflow_version: '1',
  kind: 'agent_run',
  checkpoint_json: '{"a": [1, {"b": null}]}',
  phase: 'running',
  outcome_json: null,
  owned: true,
  owner_instance: 'host-1',
  lease_until_ms: '9007199254740991',
  revision: '3',
  created_at_ms: 5,
  updated_at_ms: '6',
};

describe('toInvocationRecord', () => {
  it('maps a row to the frozen snake_case record with numbers and parsed JSON', () => {
    const record = toInvocationRecord(row);
    expect(record).toEqual({
      invocation_id: 'inv',
      workflow_id: 'w',
      workflow_version: '1',
      kind: 'agent_run',
      checkpoint: { a: [1, { b: null }] },
      phase: 'running',
      outcome: null,
      owned: true,
      owner_instance: 'host-1',
      lease_until_ms: Number.MAX_SAFE_INTEGER,
      revision: 3,
      created_at_ms: 5,
      updated_at_ms: 6,
    });
    expect(Object.isFrozen(record)).toBe(true);
    expect(Object.isFrozen((record.checkpoint as { a: unknown[] }).a[1])).toBe(true);
  });

  it('keeps JSON null apart from a missing outcome only as the value null, and freezes very deep documents without recursion', () => {
    expect(toInvocationRecord({ ...row, outcome_json: 'null', checkpoint_json: '"s"' })).toMatchObject({ outcome: null, checkpoint: 's' });
    const depth = 100_000;
    const deep = toInvocationRecord({ ...row, checkpoint_json: '['.repeat(depth) + ']'.repeat(depth) });
    let inner = deep.checkpoint as unknown[];
    for (let i = 0; i < depth - 1; i++) inner = inner[0] as unknown[];
    expect(Object.isFrozen(inner)).toBe(true);
  });
});
