import type { AdmissionStatus } from '../admission.types';

/** This instance's own share of the cluster's admission work (exact). */
export interface InstanceAdmissionStatus {
  readonly active: number;
  readonly queued: number;
}

/**
 * `AdmissionStatus` of a cluster (spec 08 §3): `active`, `queue_length`, `available` and `per_agent`
 * count every live instance, as the last decision or poll of this instance read them; `instance`
 * counts this instance's own requests. No ids, refs or content.
 */
export interface ClusterAdmissionStatus extends AdmissionStatus {
  /** Instances holding their instance lock, as the last decision or poll saw them. */
  readonly instances_live: number;
  readonly instance: InstanceAdmissionStatus;
}
