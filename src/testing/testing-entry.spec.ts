import { AdmissionController } from '../admission/admission-controller';
import { ManualClock } from './';

describe('the testing entry point', () => {
  it('drives a component as the README shows: a queued request fails when its deadline is advanced past', async () => {
    const clock = new ManualClock();
    const admission = new AdmissionController({ globalLimit: 1, overflow: 'queue', defaultQueueTimeoutMs: 1_000 }, { clock });
    const held = await admission.acquire('agent');
    const waiting = admission.acquire('agent');
    let settled = false;
    waiting.catch(() => undefined).finally(() => (settled = true));
    clock.advance(999);
    await Promise.resolve();
    expect(settled).toBe(false);
    clock.advance(1);
    await expect(waiting).rejects.toMatchObject({ code: 'queue_deadline_exceeded' });
    admission.release(held);
  });
});
