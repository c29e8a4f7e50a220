import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { CONSOLE_CSP } from '../../src/observability/console/console.controller';
import { EvaluationClient, referenceEvalRequest } from '../e2e/support/evaluation-client';
import { useConsoleSession } from './support/console-session';

/** Where the screenshots of each state go (git-ignored); `docs/console.png` is a copy of the last. */
const OUTPUT = path.resolve(__dirname, '..', '..', 'test-output', 'browser', 'console');

/** The DOM the functions run in the page use: the project compiles without the DOM library. */
interface PageElement {
  readonly textContent: string | null;
  readonly hidden: boolean;
  readonly children: ArrayLike<PageElement>;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
};

/** Each agent runs one invocation at a time, so a second and third run of an agent queue. */
const ADMISSION = { globalLimit: 4, defaultAgentLimit: 1, overflow: 'queue' as const, maxQueue: 16, defaultQueueTimeoutMs: 60_000, drainTimeoutMs: 5_000 };

/**
 * The operator console of the reference service in headless Chromium: the real app on a real socket
 * and a fresh migrated database, driven through its HTTP API while the page is watched.
 */
describe('operator console in the browser (reference service at /console)', () => {
  const session = useConsoleSession(ADMISSION);
  const base = () => session.service.http.baseUrl;
  const startRun = async (agent: string, message: string): Promise<string> => {
    const started = await session.service.http.send('/runs', { method: 'POST', body: { agent, message } }).result;
    expect(started.status).toBe(202);
    return started.body.run_id as string;
  };
  const text = (selector: string) => session.page.$eval(selector, (element) => element.textContent ?? '');
  const waitForText = (selector: string, expected: string, timeout = 15_000) =>
    session.page.waitForFunction((sel: string, want: string) => document.querySelector(sel)?.textContent === want, { timeout }, selector, expected);
  const screenshot = (name: string, fullPage = false) => session.page.screenshot({ path: path.join(OUTPUT, name), fullPage });

  beforeAll(() => mkdirSync(OUTPUT, { recursive: true }));

  test('the page loads under a strict CSP, goes live and reports no console error', async () => {
    const response = await session.page.goto(`${base()}/console`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    expect(response?.headers()['content-type']).toMatch(/^text\/html/);
    await waitForText('#connection', 'live');
    await session.page.waitForSelector('html[data-snapshot-id]');
    await waitForText('#admission-limit', '4');
    await session.page.waitForFunction(() => document.querySelector('#audit-result')?.textContent?.startsWith('intact'));
    await waitForText('#evaluations-empty', 'No evaluation jobs.');
    await screenshot('01-loaded.png');
    expect(session.watch.errors).toEqual([]);
    // behind the demo authentication, not served unguarded
    expect(session.logger.ofLevel('warn').some((line) => line.includes('served WITHOUT a guard'))).toBe(false);
  });

  test('starting queued runs through the API changes the admission numbers on the page', async () => {
    const runs = [await startRun('batch', 'first'), await startRun('batch', 'second'), await startRun('batch', 'third')];
    await waitForText('#admission-agents tr[data-agent="batch"] td.active', '1');
    await waitForText('#admission-agents tr[data-agent="batch"] td.queued', '2');
    expect(await text('#admission-active')).toBe('1');
    expect(await text('#admission-queued')).toBe('2');
    expect(await session.page.$eval('#admission-empty', (element) => (element as PageElement).hidden)).toBe(true);
    await screenshot('02-admission-queued.png');

    for (const runId of runs) expect((await session.service.http.send(`/runs/${runId}/cancel`, { method: 'POST', body: {} }).result).status).toBe(202);
    await waitForText('#admission-active', '0');
    await waitForText('#admission-queued', '0');
    await session.page.waitForFunction(() => document.querySelector('#admission-empty')?.hidden === false);
    for (const runId of runs) await waitForText(`#runs tr[data-run-id="${runId}"] td.status`, 'cancelled');
  });

  test("a run's events appear live while it runs, and its terminal status after", async () => {
    const runId = await startRun('batch', 'follow me');
    await session.page.waitForSelector(`#runs tr[data-run-id="${runId}"] button.follow`);
    await session.page.click(`#runs tr[data-run-id="${runId}"] button.follow`);
    await waitForText('#run-selected', runId);
    // batch takes three 1.5 s steps: items are seen arriving before the terminal one exists
    await session.page.waitForFunction(() => document.querySelectorAll('#run-event-list li').length >= 2 && !document.querySelector('#run-event-list li.item-terminal'));
    const early = await session.page.$$eval('#run-event-list li', (items) => items.length);
    await screenshot('03-run-events-live.png');
    await session.page.waitForSelector('#run-event-list li.item-terminal', { timeout: 20_000 });
    const items = await session.page.$$eval('#run-event-list li', (list) => list.map((item) => item.textContent ?? ''));
    expect(items.length).toBeGreaterThan(early);
    expect(items[0]).toMatch(/^1 {2}event {2}user_message {2}by user$/);
    expect(items.at(-1)).toMatch(/ {2}terminal {2}completed$/);
    expect(await text('#run-status')).toBe('completed');
    await waitForText(`#runs tr[data-run-id="${runId}"] td.status`, 'completed');
  });

  test('approving a pending confirmation on the page resumes the run to its terminal status', async () => {
    const runId = await startRun('operator', 'Clear the cache and deploy the api');
    const row = `#confirmations tr[data-run-id="${runId}"][data-call-id="deploy-1"]`;
    await session.page.waitForSelector(row, { timeout: 15_000 });
    expect(await session.page.$eval(row, (element) => [...element.querySelectorAll('td')].slice(1, 3).map((cell) => cell.textContent))).toEqual(['deploy-1', 'deploy']);
    // content-free: neither the call's arguments nor its hint reach the page
    const confirmations = await text('#confirmations');
    expect(confirmations).not.toContain('service');
    expect(confirmations).not.toContain('Deploys to production');
    await waitForText(`#runs tr[data-run-id="${runId}"] td.status`, 'paused');
    await session.page.waitForFunction(() =>
      [...document.querySelectorAll('#denials tbody tr')].some((tr) => tr.textContent?.includes('shell') && tr.textContent.includes('explicitly_denied')),
    );
    await screenshot('04-confirmation-pending.png');

    await session.page.click(`${row} button.approve`);
    await waitForText(`#runs tr[data-run-id="${runId}"] td.status`, 'completed');
    await waitForText('#run-selected', runId);
    await waitForText('#run-status', 'completed');
    await session.page.waitForFunction(() => document.querySelector('#confirmation-result')?.textContent?.startsWith('approved deploy-1'));
    await session.page.waitForSelector(row, { hidden: true });
    const items = await session.page.$$eval('#run-event-list li', (list) => list.map((item) => item.textContent ?? ''));
    expect(items.some((item) => /^\d+ {2}paused {2}awaiting deploy-1$/.test(item))).toBe(true);
    expect(items.some((item) => /^\d+ {2}resumed$/.test(item))).toBe(true);
    expect(items.at(-1)).toMatch(/ {2}terminal {2}completed$/);
    expect((await session.service.http.send(`/runs/${runId}`).result).body).toMatchObject({ status: 'completed', pending_call_ids: [] });
    await screenshot('05-confirmation-approved.png');
  });

  test('evaluation jobs show pass/fail and the comparison against a baseline; traces and the audit chain answer', async () => {
    const evaluations = new EvaluationClient(session.service.http);
    const baselineJob = await evaluations.submitted(referenceEvalRequest());
    await evaluations.waitForPhase(baselineJob);
    expect((await evaluations.putBaseline('reference-helper', 'main', { job_id: baselineJob })).status).toBe(200);
    const draftJob = await evaluations.submitted({ ...referenceEvalRequest(), agent: 'helper-draft' });
    await evaluations.waitForPhase(draftJob);

    await session.page.click('#evaluations-refresh');
    await waitForText(`#evaluations tr[data-job-id="${baselineJob}"] td.verdict`, 'pass');
    await waitForText(`#evaluations tr[data-job-id="${draftJob}"] td.verdict`, 'fail');
    await session.page.click(`#evaluations tr[data-job-id="${draftJob}"] button.compare`);
    await session.page.waitForFunction(() => document.querySelector('#comparison p')?.textContent?.endsWith('REGRESSED'));
    const tools = await session.page.$$eval('#comparison tr', (rows) => rows.map((row) => row.firstElementChild?.textContent));
    expect(tools).toEqual(['metric', 'response_match', 'tool_trajectory', 'tool_trajectory_in_order']);

    const operatorRun = await session.page.$eval('#run-selected', (element) => element.textContent ?? '');
    await session.page.type('#trace-run-id', operatorRun);
    await session.page.click('#trace-query');
    await session.page.waitForFunction(() => / records/.test(document.querySelector('#trace-result')?.textContent ?? ''));
    const kinds = await session.page.$$eval('#traces tbody tr', (rows) => rows.map((row) => row.children[2].textContent));
    expect(kinds).toContain('workflow_lifecycle');
    expect(kinds).toContain('observability');

    await session.page.click('#audit-verify');
    await session.page.waitForFunction(() => document.querySelector('#audit-result')?.textContent?.startsWith('intact'));
    await screenshot('06-overview.png', true);
    expect(session.watch.errors).toEqual([]);
  });
});
