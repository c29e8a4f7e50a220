import type { PendingRequest } from '../e2e/support/http-client';
import { useConsoleSession } from './support/console-session';

/** The DOM the functions run in the page use: the project compiles without the DOM library. */
interface PageElement {
  readonly textContent: string | null;
  readonly hidden: boolean;
  getAttribute(name: string): string | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
};

/**
 * Flow control on: one permit per tenant, a global cost limit, and agent `chat` adaptive (its effective
 * limit shown beside its static one). Agent `bulk` has neither, so its effective-limit cell is a dash.
 */
const ADMISSION = {
  globalLimit: 40,
  defaultAgentLimit: 30,
  agentLimits: { chat: 8 },
  defaultTenantLimit: 1,
  globalCostLimit: 1000,
  adaptive: { chat: { min: 2 } },
  overflow: 'queue' as const,
  maxQueue: 40,
  defaultQueueTimeoutMs: 60_000,
  drainTimeoutMs: 5_000,
};

/** Singles: tenants with one call each; with `busy` they are more than the 20 tenants `status()` names. */
const SINGLES = Array.from({ length: 23 }, (_, i) => `t-${String(i).padStart(2, '0')}`);

/**
 * The operator console's admission panel under flow control (spec 09 §7) in headless Chromium, over the
 * reference service's invoke route with tenants from `x-tenant-id`: the tenants table lists the tenants
 * with most work first, folds the rest into one `_other` row, and the panel shows cost in use and the
 * adaptive agent's effective limit. Leaving the calls empties the table again.
 */
describe('operator console: the admission panel under flow control', () => {
  const session = useConsoleSession(ADMISSION);
  const calls: PendingRequest[] = [];
  afterAll(() => calls.forEach((call) => call.abort()));

  const invoke = (agent: string, tenant: string) => {
    const call = session.service.http.send(`/agents/${agent}/invoke`, { method: 'POST', body: { work_ms: 60_000 }, headers: { 'x-tenant-id': tenant } });
    calls.push(call);
    return call;
  };
  const waitForText = (selector: string, expected: string, timeout = 15_000) =>
    session.page.waitForFunction((sel: string, want: string) => document.querySelector(sel)?.textContent === want, { timeout }, selector, expected);
  const cells = (rowSelector: string) => session.page.$$eval(`${rowSelector} td`, (tds) => tds.map((td) => td.textContent));

  test('tenants with most work first, the others folded into _other, cost in use and effective limits', async () => {
    await session.page.goto(`${session.service.http.baseUrl}/console`, { waitUntil: 'load' });
    await waitForText('#connection', 'live');
    await waitForText('#admission-limit', '40');
    // flow options on, no work yet: the tenants panel is shown, empty
    await session.page.waitForFunction(() => document.querySelector('#admission-tenants-panel')?.hidden === false && document.querySelector('#admission-tenants-empty')?.hidden === false);

    // busy: one call held, two queued behind its tenant limit; then one call per single tenant
    for (let i = 0; i < 3; i++) invoke('chat', 'busy');
    for (const tenant of SINGLES) invoke('bulk', tenant);

    await waitForText('#admission-active', '24');
    await waitForText('#admission-queued', '2');
    await waitForText('#admission-cost', '24');
    await waitForText('#admission-agents tr[data-agent="chat"] td.effective-limit', '8');
    expect(await cells('#admission-agents tr[data-agent="chat"]')).toEqual(['chat', '1', '2', '8', '8', '1']);
    expect(await cells('#admission-agents tr[data-agent="bulk"]')).toEqual(['bulk', '23', '0', '30', '-', '23']);

    // 20 named rows, busy first (most work), then the singles in id order, then one _other row for the last four
    await session.page.waitForFunction(() => document.querySelectorAll('#admission-tenants tr[data-tenant]').length === 20);
    const named = await session.page.$$eval('#admission-tenants tr[data-tenant]', (rows) => rows.map((row) => row.getAttribute('data-tenant')));
    expect(named).toEqual(['busy', ...SINGLES.slice(0, 19)]);
    expect(await cells('#admission-tenants tr[data-tenant="busy"]')).toEqual(['busy', '1', '2', '1', '1']);
    expect(await cells('#admission-tenants tr[data-tenant-other]')).toEqual(['_other (4 tenants)', '4', '0', '-', '-']);
    expect(await session.page.$eval('#admission-tenants-empty', (element) => (element as unknown as PageElement).hidden)).toBe(true);

    // the clients leave: queued and held calls end, and the table is empty again
    calls.splice(0).forEach((call) => call.abort());
    await waitForText('#admission-active', '0', 30_000);
    await waitForText('#admission-queued', '0');
    await session.page.waitForFunction(() => document.querySelector('#admission-tenants-empty')?.hidden === false && document.querySelectorAll('#admission-tenants tr[data-tenant-other]').length === 0);
    expect(session.watch.errors).toEqual([]);
  });
});
