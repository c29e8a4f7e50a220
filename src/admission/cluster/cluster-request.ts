import type { OverflowMode } from '../admission-config';
import type { ParsedRequest } from '../admission-request';
import { TrackedRequest, type RequestState } from '../requests/tracked-request';

/** A request submitted on this instance: what this instance knows and watches of it. */
export class ClusterRequest extends TrackedRequest {
  /** `pending` until its submit decision is applied; `seq` is the cluster-wide enqueue order once queued. */
  override state: RequestState = 'pending';
  /** A grant was seen while the submit decision was still being applied. */
  grantedEarly = false;
  readonly overflow: OverflowMode;
  /** Flow control: whether its agent was saturated at the grant (spec 09 §8); unknown for a grant read by a poll. */
  saturated: boolean | undefined = undefined;

  constructor(
    issuer: object,
    ref: string,
    /** Chosen before the request is stored, so whichever instance grants it writes the permit row. */
    readonly permitId: string,
    agentId: string,
    request: ParsedRequest,
    submittedAt: number,
  ) {
    super(issuer, ref, agentId, request.deadline, submittedAt, request.owner, request.signal);
    this.overflow = request.overflow;
    this.tenant = request.tenant;
    this.cost = request.cost;
    this.rank = request.rank;
  }
}

/** Deadline order of the local expiry heap: (deadline, submit time). */
export const earlierDeadline = (a: ClusterRequest, b: ClusterRequest): boolean =>
  a.deadline < b.deadline || (a.deadline === b.deadline && (a.submittedAt < b.submittedAt || (a.submittedAt === b.submittedAt && a.ref < b.ref)));
