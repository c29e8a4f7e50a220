import type { Answer, ResponseLog } from './response-log';

/** An instance the load is sent to. */
export interface LoadTarget {
  readonly label: string;
  readonly baseUrl: string;
}

/** The demo tokens of the reference service (`DEFAULT_REFERENCE_USERS`). */
const USER_TOKEN = 'alice-token';
const APPROVER_TOKEN = 'operator-token';

/** Every reference agent, how its runs are started, and whether they pause for a confirmation. */
const RUN_KINDS = [
  { agent: 'helper', durable: false },
  { agent: 'helper-draft', durable: true },
  { agent: 'operator', durable: true },
  { agent: 'batch', durable: true },
] as const;

const TERMINAL_RUN = new Set(['completed', 'failed', 'cancelled', 'timed_out']);
const TERMINAL_JOB = new Set(['completed', 'failed', 'timed_out', 'cancelled']);
const INVOKE_AGENTS = ['a', 'b', 'c'];
/** Cases of the short jobs (a few seconds) and of the long ones (running across the blink). */
const EVAL_CASES = { short: 5, long: 30 } as const;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An eval set over the `helper` agent: one Runner run per case. */
function evalRequest(length: keyof typeof EVAL_CASES): Record<string, unknown> {
  return {
    set: {
      id: `chaos-helper-${length}`,
      version: '1',
      cases: Array.from({ length: EVAL_CASES[length] }, (_, index) => ({ case_id: `c${index}`, input: `question ${index}`, expected_output: 'Found it: see the runbook, section 2.' })),
    },
    agent: 'helper',
    metrics: [{ name: 'response_match' }],
  };
}

/**
 * The mixed load of the chaos suite, on every target at once: admitted invocations of three agents
 * (`POST /agents/:agent/invoke`, read back through `GET /invocations/:id`), runs of every reference
 * agent followed to their end (paused runs confirmed by an approver), evaluation jobs (short ones,
 * and long ones that run across the blink) followed to their result, and the policy routes. Every answer goes to the {@link ResponseLog}.
 */
export class MixedLoad {
  /** The last status each started run was seen in, by `<instance>/<agent>`. */
  readonly runOutcomes = new Map<string, Map<string, number>>();
  /** The last phase each submitted evaluation job was seen in. */
  readonly jobOutcomes = new Map<string, number>();
  private running = true;
  private policyRounds = 0;
  private followUntilMs = Number.POSITIVE_INFINITY;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly log: ResponseLog,
    targets: readonly LoadTarget[],
  ) {
    for (const target of targets) {
      for (const agent of INVOKE_AGENTS) this.loops.push(this.loop(() => this.invoke(target, agent)));
      for (const kind of RUN_KINDS) this.loops.push(this.loop(() => this.run(target, kind.agent, kind.durable)));
      this.loops.push(this.loop(() => this.evaluate(target, 'short')), this.loop(() => this.evaluate(target, 'long')));
      this.loops.push(this.loop(() => this.policy(target)));
    }
  }

  /** Starts no new work; runs and jobs in flight are still followed (and confirmed) for `followMs`. */
  async stop(followMs: number): Promise<void> {
    this.running = false;
    this.followUntilMs = Date.now() + followMs;
    await Promise.all(this.loops);
  }

  private async loop(step: () => Promise<boolean>): Promise<void> {
    while (this.running) {
      const ok = await step();
      // an outage answers fast: do not spin on it
      await pause(ok ? 50 : 250);
    }
  }

  private following(): boolean {
    return Date.now() < this.followUntilMs;
  }

  private async invoke(target: LoadTarget, agent: string): Promise<boolean> {
    const answer = await this.log.send(target, 'POST /agents/:agent/invoke', `/agents/${agent}/invoke`, { method: 'POST', body: { work_ms: 300 } });
    if (answer.status !== 200) return false;
    await this.log.send(target, 'GET /invocations/:id', `/invocations/${encodeURIComponent(String(answer.body.invocation_id))}`);
    return true;
  }

  private async run(target: LoadTarget, agent: string, durable: boolean): Promise<boolean> {
    const started = await this.log.send(target, 'POST /runs', '/runs', { method: 'POST', token: USER_TOKEN, body: { agent, message: 'Where is the runbook?', durable } });
    if (started.status !== 202) return false;
    const runId = encodeURIComponent(String(started.body.run_id));
    let last = 'unknown';
    while (this.following()) {
      const read = await this.log.send(target, 'GET /runs/:id', `/runs/${runId}`, { token: USER_TOKEN });
      if (read.status === 200) {
        last = String(read.body.status);
        if (TERMINAL_RUN.has(last)) break;
        if (last === 'paused') await this.confirm(target, runId, read);
      }
      await pause(300);
    }
    const key = `${target.label}/${agent}`;
    this.runOutcomes.set(key, tally(this.runOutcomes.get(key), last));
    return true;
  }

  private async confirm(target: LoadTarget, runId: string, read: Answer): Promise<void> {
    for (const callId of (read.body.pending_call_ids ?? []) as string[]) {
      await this.log.send(target, 'POST /runs/:id/confirmations/:callId', `/runs/${runId}/confirmations/${encodeURIComponent(callId)}`, {
        method: 'POST',
        token: APPROVER_TOKEN,
        body: { confirmed: true, payload: 'approved by the chaos suite' },
      });
    }
  }

  private async evaluate(target: LoadTarget, length: keyof typeof EVAL_CASES): Promise<boolean> {
    const submitted = await this.log.send(target, 'POST /evaluations', '/evaluations', { method: 'POST', token: USER_TOKEN, body: evalRequest(length) });
    if (submitted.status !== 201) return false;
    const jobId = encodeURIComponent(String(submitted.body.job.job_id));
    let last = 'unknown';
    while (this.following()) {
      const read = await this.log.send(target, 'GET /evaluations/:jobId', `/evaluations/${jobId}`, { token: USER_TOKEN });
      if (read.status === 200) {
        last = String(read.body.job.phase);
        if (TERMINAL_JOB.has(last)) break;
      }
      await pause(400);
    }
    if (last === 'completed') await this.log.send(target, 'GET /evaluations/:jobId/result', `/evaluations/${jobId}/result`, { token: USER_TOKEN });
    await this.log.send(target, 'GET /evaluations', '/evaluations?limit=5', { token: USER_TOKEN });
    tally(this.jobOutcomes, last);
    return true;
  }

  /** One round of the policy routes: allowed and denied agents and tools, the rules, the audit chain. */
  private async policy(target: LoadTarget): Promise<boolean> {
    const answers = [
      await this.log.send(target, 'POST /chat/helper', '/chat/helper', { method: 'POST', body: { prompt: 'Where is the runbook?' } }),
      await this.log.send(target, 'POST /chat/stranger', '/chat/stranger', { method: 'POST', body: { prompt: 'hello' } }),
      await this.log.send(target, 'POST /tools/search', '/tools/search', { method: 'POST', body: { query: 'runbook', results: 3 } }),
      await this.log.send(target, 'POST /tools/shell', '/tools/shell', { method: 'POST', body: { command: 'ls' } }),
      await this.log.send(target, 'GET /policy', '/policy'),
      await this.log.send(target, 'GET /admission/status', '/admission/status'),
    ];
    // the verification reads the whole chain: one round in five
    this.policyRounds += 1;
    if (this.policyRounds % 5 === 0) answers.push(await this.log.send(target, 'GET /policy/audit/verify', '/policy/audit/verify'));
    return answers.every((answer) => answer.status !== 0 && answer.status < 500);
  }
}

function tally(counts: Map<string, number> = new Map(), status: string): Map<string, number> {
  return counts.set(status, (counts.get(status) ?? 0) + 1);
}
