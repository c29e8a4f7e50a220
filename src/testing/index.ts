/**
 * `nest-agent-runtime/testing`: helpers for tests of applications that use the runtime.
 *
 * @example
 * import { ManualClock } from 'nest-agent-runtime/testing';
 * const clock = new ManualClock();
 * const admission = new AdmissionController({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 1000 }, { clock });
 * clock.advance(1000); // queued requests past their deadline fail now
 */
export { ManualClock } from '../shared/time/manual-clock';
