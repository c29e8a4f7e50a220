import { runChaos } from './support/chaos-scenario';

/**
 * Issue 23 item 9, default mode: one reference-service process under mixed load while its
 * Postgres is stopped for 5 s and started again. See `test/chaos/support/chaos-verdict.ts` for the
 * assertions; a failure lists every violated one with its numbers, then the run's report.
 */
describe('chaos: a Postgres blink under load, one process', () => {
  test('no 5xx but 503 with a code and Retry-After, live throughout, ready again within 15 s, no row stuck, admission empty', async () => {
    const { violations, report } = await runChaos({ mode: 'default', labels: ['a'] });
    if (violations.length > 0) throw new Error(`${violations.length} chaos assertion(s) failed:\n- ${violations.join('\n- ')}\n\n${report}`);
  });
});
