import { componentStates, indicatorResult, readinessReport } from './readiness-report';

describe('readiness report', () => {
  it('builds a terminus-shaped indicator result', () => {
    expect(indicatorResult('admission', true, { active: 1 })).toEqual({ admission: { active: 1, status: 'up' } });
    expect(indicatorResult('database', false)).toEqual({ database: { status: 'down' } });
  });

  it('keeps numbers, booleans, nulls and snake_case codes of an answer, never free text such as an error message', () => {
    expect(componentStates('db', { db: { status: 'down', message: 'password authentication failed', retries: 2, lock_held: false, since: null, state: 'standby', detail: 'Standby' } })).toEqual([
      ['db', { status: 'down', retries: 2, lock_held: false, since: null, state: 'standby' }],
    ]);
  });

  it.each([undefined, null, 'up', [], {}, { db: { status: 'fine' } }, { db: 'up' }])('an answer without a component state (%p) counts as down', (answer) => {
    expect(componentStates('db', answer)).toEqual([['db', { status: 'down' }]]);
  });

  it('is ok only when every component is up; keys sorted; the first state of a key wins', () => {
    const up = { status: 'up' } as const;
    const down = { status: 'down' } as const;
    expect(readinessReport([['b', up], ['a', up]])).toEqual({ status: 'ok', info: { a: up, b: up }, error: {}, details: { a: up, b: up } });
    const report = readinessReport([['z', down], ['a', up], ['z', up]]);
    expect(report).toEqual({ status: 'error', info: { a: up }, error: { z: down }, details: { a: up, z: down } });
    expect(Object.keys(report.details)).toEqual(['a', 'z']);
    expect(Object.isFrozen(report)).toBe(true);
  });
});

describe('readinessReport with advisory components', () => {
  it('reports a down advisory component in details only: readiness stays ok', () => {
    const report = readinessReport([['admission', { status: 'up' } as never], ['evaluation', { status: 'down', state: 'standby' } as never]], new Set(['evaluation']));
    expect(report.status).toBe('ok');
    expect(report.error).toEqual({});
    expect(report.details.evaluation).toEqual({ status: 'down', state: 'standby' });
  });

  it('still fails on a down component that is not advisory', () => {
    const report = readinessReport([['admission', { status: 'down' } as never], ['evaluation', { status: 'down' } as never]], new Set(['evaluation']));
    expect(report.status).toBe('error');
    expect(Object.keys(report.error)).toEqual(['admission']);
  });
});
