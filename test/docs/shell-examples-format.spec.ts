import { instancesOf, outputMatches, stepsOf, unassignedVariables, type DocBlock } from './support/shell-examples';

/** The rules `shell-examples.spec.ts` reads a console block by: they must be able to fail. */
describe('the console block convention', () => {
  const block = (code: string): DocBlock => ({ file: 'docs/x.md', line: 10, lang: 'console', code, markers: {} });

  it('splits a block into commands (with continued lines) and the output under each', () => {
    const steps = stepsOf(block("$ curl -s localhost:3000/a \\\n  -d '{}'\n{\"ok\":true}\n$ curl -s localhost:3000/b"));
    expect(steps).toEqual([
      { command: "curl -s localhost:3000/a \\\n  -d '{}'", expected: ['{"ok":true}'], line: 11 },
      { command: 'curl -s localhost:3000/b', expected: [], line: 14 },
    ]);
  });

  it('matches shown output exactly, with … standing for any text, also across lines', () => {
    expect(outputMatches(['{"run_id":"run-…","session_id":"ses-…"}'], '{"run_id":"run-abc","session_id":"ses-def"}\n')).toBe(true);
    expect(outputMatches(['HTTP/1.1 403 Forbidden', '…', '{"code":"runtime_policy_denied",…}'], 'HTTP/1.1 403 Forbidden\r\nX-A: 1\r\n\r\n{"code":"runtime_policy_denied","x":1}')).toBe(true);
    expect(outputMatches(['{"status":"ok"}'], '{"status":"error"}')).toBe(false);
    expect(outputMatches(['HTTP/1.1 200 OK', '…'], 'HTTP/1.1 503 Service Unavailable\n')).toBe(false);
    expect(outputMatches(['{"a":1,…}'], 'x{"a":1,"b":2}')).toBe(false);
  });

  it('finds a variable used before any command of the block assigned it', () => {
    expect(unassignedVariables(stepsOf(block('$ curl -s localhost:3000/evaluations/$JOB')))).toEqual(['JOB']);
    expect(unassignedVariables(stepsOf(block('$ RUN=$(curl -s localhost:3000/runs)\n$ curl localhost:3000/runs/${RUN}/events')))).toEqual([]);
    expect(unassignedVariables(stepsOf(block('$ for i in 1 2; do curl localhost:3000/$i; done')))).toEqual([]);
  });

  it('reads the instances a cluster block addresses, one plain service otherwise', () => {
    expect(instancesOf({ ...block(''), markers: { instances: '3001=node-a 3002=node-b' } })).toEqual([
      { port: '3001', instanceId: 'node-a' },
      { port: '3002', instanceId: 'node-b' },
    ]);
    expect(instancesOf(block(''))).toEqual([{ port: '3000', instanceId: null }]);
  });
});
