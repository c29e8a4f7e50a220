import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import type { AdmissionService } from '../../src/admission/admission-service';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { Permit } from '../../src/admission/permit';
import { ADMISSION_VARIANTS, admissionSuite, granted } from '../support/admission-controller-fixture';

const REQUEST_REF = /^request-[A-Za-z0-9_-]{24}$/;
const PERMIT_ID = /^permit-[A-Za-z0-9_-]{24}$/;

function abortCount(signal: AbortSignal): () => number {
  let count = 0;
  signal.addEventListener('abort', () => count++);
  return () => count;
}

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const suite = admissionSuite(variantName);
  /** The fixture with `grant`, a submit that must be granted. */
  const setup = async (config: AdmissionConfig = {}) => {
    const fixture = await suite.setup(config);
    const grant = async (agentId = 'agent', opts: AdmissionRequestOptions = {}) => granted(await fixture.controller.submit(agentId, opts));
    return { ...fixture, grant };
  };

  describe('§3 Identifiers and permits', () => {
    it('request refs and permit ids are a prefix and 24 URL-safe characters, all distinct', async () => {
      const { controller } = await setup({ overflow: 'queue', globalLimit: 50, defaultAgentLimit: 50 });
      const refs = new Set<string>();
      const ids = new Set<string>();
      for (let i = 0; i < 100; i++) {
        const result = await controller.submit(`agent-${i % 3}`);
        expect(result.requestRef).toMatch(REQUEST_REF);
        refs.add(result.requestRef);
        if (result.status === 'granted') {
          expect(result.permit.id).toMatch(PERMIT_ID);
          expect(result.permit.requestRef).toBe(result.requestRef);
          ids.add(result.permit.id);
        }
      }
      expect(refs.size).toBe(100);
      expect(ids.size).toBe(50);
    });

    it('a permit is a frozen object with id, agentId, requestRef, signal and Symbol.dispose', async () => {
      const { grant } = await setup();
      const permit = await grant('support-agent');
      expect(Object.isFrozen(permit)).toBe(true);
      // data as own keys; `signal` (created on first read) and `Symbol.dispose` come from the class
      expect(Object.keys(permit).sort()).toEqual(['agentId', 'id', 'requestRef']);
      expect(typeof permit[Symbol.dispose]).toBe('function');
      expect(JSON.parse(JSON.stringify(permit))).toEqual({ id: permit.id, agentId: 'support-agent', requestRef: permit.requestRef });
      expect(permit.agentId).toBe('support-agent');
      expect(permit.id).toMatch(PERMIT_ID);
      expect(permit.requestRef).toMatch(REQUEST_REF);
      expect(permit.signal).toBeInstanceOf(AbortSignal);
      expect(permit.signal.aborted).toBe(false);
      expect(() => {
        (permit as { id: string }).id = 'permit-forged';
      }).toThrow(TypeError);
    });

    it.each([
      ['released', (controller: AdmissionService, permit: Permit) => controller.release(permit)],
      ['cancelled', (controller: AdmissionService, permit: Permit) => controller.cancel(permit.requestRef)],
    ] as const)('permit.signal aborts exactly once with permit_revoked {outcome: %s}', async (outcome, revoke) => {
      const { controller, grant } = await setup();
      const permit = await grant();
      const aborts = abortCount(permit.signal);
      expect(revoke(controller, permit)).toBe(true);
      expect(permit.signal.aborted).toBe(true);
      expect(permit.signal.reason).toBeInstanceOf(AdmissionError);
      expect(permit.signal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome } });
      expect(revoke(controller, permit)).toBe(false);
      expect(controller.release(permit)).toBe(false);
      expect(controller.cancel(permit.requestRef)).toBe(false);
      expect(aborts()).toBe(1);
    });

    it('permit.signal aborts with outcome owner_down when the owner aborts', async () => {
      const { controller, grant } = await setup();
      const owner = new AbortController();
      const permit = await grant('agent', { owner: owner.signal });
      const aborts = abortCount(permit.signal);
      owner.abort();
      expect(permit.signal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome: 'owner_down' } });
      expect(controller.release(permit)).toBe(false);
      expect(aborts()).toBe(1);
    });

    it('a signal first read after the revoke is already aborted with the reason', async () => {
      const { controller, grant } = await setup();
      const permit = await grant();
      controller.release(permit);
      expect(permit.signal.aborted).toBe(true);
      expect(permit.signal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome: 'released' } });
      expect(permit.signal).toBe(permit.signal);
    });

    it('[Symbol.dispose]() releases and ignores the result', async () => {
      const { controller, grant, events, settle } = await setup();
      const permit = await grant();
      permit[Symbol.dispose]();
      expect(controller.status().active).toBe(0);
      expect(permit.signal.reason).toMatchObject({ details: { outcome: 'released' } });
      expect(() => permit[Symbol.dispose]()).not.toThrow();
      await settle();
      expect(events.map((event) => event.outcome)).toEqual(['granted', 'released']);
    });

    it('`using permit = await controller.acquire(...)` releases at the end of the block', async () => {
      const { controller } = await setup();
      let inside = -1;
      {
        using permit = await controller.acquire('agent');
        inside = controller.status().active;
        expect(permit.signal.aborted).toBe(false);
      }
      expect(inside).toBe(1);
      expect(controller.status().active).toBe(0);
    });

    it('a look-alike object with the same id is refused and changes nothing', async () => {
      const { controller, grant, events, settle } = await setup();
      const permit = await grant();
      const lookAlikes = [
        { ...permit },
        Object.freeze({ id: permit.id, agentId: permit.agentId, requestRef: permit.requestRef, signal: permit.signal, [Symbol.dispose]() {} }),
        Object.create(permit) as Permit,
        { id: permit.id },
      ];
      for (const lookAlike of lookAlikes) expect(controller.release(lookAlike as Permit)).toBe(false);
      await settle();
      expect(controller.status().active).toBe(1);
      expect(permit.signal.aborted).toBe(false);
      expect(events).toHaveLength(1);
      expect(controller.release(permit)).toBe(true);
    });

    it('a permit issued by another controller is refused', async () => {
      const first = await setup();
      const second = await setup();
      const permit = await first.grant();
      await second.grant();
      expect(second.controller.release(permit)).toBe(false);
      await Promise.all([first.settle(), second.settle()]);
      expect(second.controller.status().active).toBe(1);
      expect(first.controller.status().active).toBe(1);
      expect(permit.signal.aborted).toBe(false);
    });
  });
});
