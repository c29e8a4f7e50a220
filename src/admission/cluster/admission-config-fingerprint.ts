import type { ResolvedAdmissionConfig } from '../admission-config';
import { canonicalJson } from '../../json/canonical-json';
import { sha256Hex } from '../../shared/text/sha256';

/** The limits every instance of a cluster must agree on, and their fingerprint. */
export interface AdmissionConfigFingerprint {
  /** Canonical JSON of the limits (what the config row's `limits` column holds). */
  readonly limits: string;
  /** Lowercase hex SHA-256 of `limits`. */
  readonly fingerprint: string;
}

/**
 * The fingerprint of the limits that decide admission across the cluster (spec 08 §3): global and
 * default agent limit, per-agent limits, queue bound and default overflow. Timeouts are left out:
 * they are each instance's own business.
 */
export function admissionConfigFingerprint(config: ResolvedAdmissionConfig): AdmissionConfigFingerprint {
  // a null-prototype object keeps an agent id such as "__proto__" an ordinary key; canonical JSON sorts the keys
  const agentLimits = Object.create(null) as Record<string, number>;
  for (const [agentId, limit] of config.agentLimits) agentLimits[agentId] = limit;
  const limits = canonicalJson({
    global_limit: config.globalLimit,
    default_agent_limit: config.defaultAgentLimit,
    agent_limits: agentLimits,
    max_queue: config.maxQueue,
    overflow: config.overflow,
  });
  return Object.freeze({ limits, fingerprint: sha256Hex(limits) });
}
