import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import type { AdmissionService } from '../../src/admission/admission-service';
import type { Permit } from '../../src/admission/permit';

/**
 * Records the order in which labelled requests are granted: `take(label, agent, opts)` acquires and
 * appends `label` to `order` once granted; `permits` holds each label's permit.
 */
export class GrantLog {
  readonly order: string[] = [];
  readonly permits = new Map<string, Permit>();
  readonly failures = new Map<string, unknown>();

  constructor(private readonly controller: AdmissionService) {}

  take(label: string, agentId: string, opts?: AdmissionRequestOptions): Promise<Permit | undefined> {
    return this.controller.acquire(agentId, opts).then(
      (permit) => {
        this.order.push(label);
        this.permits.set(label, permit);
        return permit;
      },
      (error: unknown) => {
        this.failures.set(label, error);
        return undefined;
      },
    );
  }

  /** Releases the permit of `label` (which must have been granted). */
  release(label: string): void {
    const permit = this.permits.get(label);
    if (permit === undefined) throw new Error(`${label} holds no permit`);
    this.permits.delete(label);
    this.controller.release(permit);
  }

  /** Releases the oldest held permit (by grant order). */
  releaseOldest(): string {
    const label = this.order.find((candidate) => this.permits.has(candidate));
    if (label === undefined) throw new Error('no permit held');
    this.release(label);
    return label;
  }

  /** Releases the oldest held permit `count` times, letting the controller settle (and grant) after each. */
  async releaseInTurn(count: number, settle: () => Promise<void>): Promise<void> {
    for (let release = 0; release < count; release++) {
      this.releaseOldest();
      await settle();
    }
  }
}
