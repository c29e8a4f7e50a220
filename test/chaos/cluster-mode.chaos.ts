import { runChaos } from './support/chaos-scenario';

/**
 * Issue 23 item 9, cluster mode: two reference-service processes (`CLUSTER=1`, instances
 * `chaos-a` and `chaos-b`, their own ports) on one database, under mixed load on both while
 * Postgres is stopped for 5 s and started again. Same assertions as the default mode, per instance.
 */
describe('chaos: a Postgres blink under load, two cluster instances', () => {
  test('no 5xx but 503 with a code and Retry-After, live throughout, ready again within 15 s, no row stuck, admission empty', async () => {
    const { violations, report } = await runChaos({ mode: 'cluster', labels: ['a', 'b'] });
    if (violations.length > 0) throw new Error(`${violations.length} chaos assertion(s) failed:\n- ${violations.join('\n- ')}\n\n${report}`);
  });
});
