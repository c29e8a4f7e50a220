import type { AdmissionConfig } from '../admission/admission-config';

/**
 * Admission settings of the reference service, from the environment: small limits so that
 * queueing and rejection are easy to see with `curl`.
 */
export function referenceAdmissionConfig(env: NodeJS.ProcessEnv = process.env): AdmissionConfig {
  const number = (name: string, fallback: number) => (env[name] === undefined ? fallback : Number(env[name]));
  return {
    globalLimit: number('ADMISSION_GLOBAL_LIMIT', 4),
    defaultAgentLimit: number('ADMISSION_AGENT_LIMIT', 2),
    overflow: (env.ADMISSION_OVERFLOW as AdmissionConfig['overflow']) ?? 'queue',
    maxQueue: number('ADMISSION_MAX_QUEUE', 16),
    defaultQueueTimeoutMs: number('ADMISSION_QUEUE_TIMEOUT_MS', 10_000),
    drainTimeoutMs: number('ADMISSION_DRAIN_TIMEOUT_MS', 10_000),
  };
}
