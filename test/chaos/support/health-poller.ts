import { ResponseLog } from './response-log';

/** One probe answer. */
export interface ProbeSample {
  readonly atMs: number;
  /** 0 when no answer came within the probe's timeout. */
  readonly status: number;
  /** The components a 503 names as down (`down` of the liveness answer, the `error` keys of a readiness report), for the report. */
  readonly down: readonly string[];
}

/** Generous on a shared machine; a stalled event loop or a hung probe still shows as a failed sample. */
const PROBE_TIMEOUT_MS = 5000;

/**
 * Polls `/health/live` and `/health/ready` of one instance every `intervalMs` (each probe waits for
 * its answer, so a stalled process shows as missing or late samples) until {@link stop}.
 */
export class HealthPoller {
  readonly live: ProbeSample[] = [];
  readonly ready: ProbeSample[] = [];
  private running = true;
  private readonly loops: Promise<void>[];
  private readonly http = new ResponseLog(PROBE_TIMEOUT_MS);

  constructor(
    private readonly instance: { label: string; baseUrl: string },
    private readonly intervalMs = 200,
  ) {
    this.loops = [this.poll('/health/live', this.live), this.poll('/health/ready', this.ready)];
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async poll(path: string, samples: ProbeSample[]): Promise<void> {
    while (this.running) {
      const startedAt = Date.now();
      const answer = await this.http.send(this.instance, `GET ${path}`, path, { record: false });
      samples.push({ atMs: startedAt, status: answer.status, down: answer.status === 200 ? [] : downOf(answer.body) });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, this.intervalMs - (Date.now() - startedAt))));
    }
  }
}

/** The components a health body names as failing: `down: [...]`, or the keys of a terminus-style `error` object. */
function downOf(body: any): string[] {
  if (!body || typeof body !== 'object') return [];
  if (Array.isArray(body.down)) return body.down.map(String);
  if (body.error && typeof body.error === 'object') return Object.keys(body.error);
  return [];
}
