import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import { AdmissionError } from '../../src/admission/admission.errors';
import { ADMISSION_VARIANTS, admissionSuite, refusal } from '../support/admission-controller-fixture';

const forgedSignal = () => Object.create(AbortSignal.prototype) as AbortSignal;
const throwingGetter = (key: string) =>
  Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw new Error('getter secret');
    },
  });

const INVALID_OPTIONS: Array<[string, unknown]> = [
  ['owner', {}],
  ['owner', new AbortController()],
  ['owner', 'signal'],
  ['owner', null],
  ['owner', forgedSignal()],
  ['signal', {}],
  ['signal', new AbortController()],
  ['signal', null],
  ['signal', forgedSignal()],
  ['overflow', 'Queue'],
  ['overflow', ''],
  ['overflow', null],
  ['overflow', 1],
  ['deadline', NaN],
  ['deadline', -Infinity],
  ['deadline', '1000'],
  ['deadline', 'INFINITY'],
  ['deadline', null],
  ['deadline', 10n],
  ['queueTimeoutMs', -1],
  ['queueTimeoutMs', 1.5],
  ['queueTimeoutMs', NaN],
  ['queueTimeoutMs', -Infinity],
  ['queueTimeoutMs', 2 ** 53],
  ['queueTimeoutMs', '100'],
  ['queueTimeoutMs', null],
];

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const { setup } = admissionSuite(variantName);

  describe('§4 Request options', () => {
    describe('validation', () => {
      it.each(INVALID_OPTIONS)('an invalid %s (%p) is invalid_admission_options naming the option', async (field, value) => {
        const { controller, events, settle } = await setup();
        const error = await refusal(() => controller.submit('agent', { [field]: value } as AdmissionRequestOptions));
        expect(error).toBeInstanceOf(AdmissionError);
        expect(error.code).toBe('invalid_admission_options');
        expect(error.details).toEqual({ field });
        await settle();
        expect(events).toEqual([]);
        expect((await controller.submit('agent')).status).toBe('granted');
      });

      it('an overridden option is still validated (queueTimeoutMs beside deadline)', async () => {
        const { controller } = await setup({ overflow: 'queue' });
        const error = await refusal(() => controller.submit('agent', { deadline: 5000, queueTimeoutMs: -1 }));
        expect(error.details).toEqual({ field: 'queueTimeoutMs' });
      });

      it('opts that are not a plain object are refused with field opts', async () => {
        const { controller, events, settle } = await setup();
        const hostile = new Proxy(
          {},
          {
            getPrototypeOf() {
              throw new Error('trap secret');
            },
          },
        );
        for (const opts of [null, [], 'queue', 5, new Map(), new (class Options {})(), Object.create({ overflow: 'queue' }), () => ({}), hostile]) {
          const error = await refusal(() => controller.submit('agent', opts as AdmissionRequestOptions));
          expect(error.code).toBe('invalid_admission_options');
          expect(error.details).toEqual({ field: 'opts' });
        }
        await settle();
        expect(events).toEqual([]);
      });

      it('a throwing getter gives a typed error that does not carry the exception', async () => {
        const { controller } = await setup();
        for (const key of ['owner', 'signal', 'overflow', 'deadline', 'queueTimeoutMs']) {
          const error = await refusal(() => controller.submit('agent', throwingGetter(key) as AdmissionRequestOptions));
          expect(error).toBeInstanceOf(AdmissionError);
          expect(error.code).toBe('invalid_admission_options');
          expect(error.message).not.toContain('getter secret');
        }
        expect(controller.status().active).toBe(0);
      });

      it('omitted opts, a null-prototype object and unknown keys are accepted', async () => {
        const { controller } = await setup();
        expect((await controller.submit('agent')).status).toBe('granted');
        expect((await controller.submit('agent', Object.create(null))).status).toBe('granted');
        expect((await controller.submit('agent', { priority: 'high', timeout: -1 } as AdmissionRequestOptions)).status).toBe('granted');
        expect((await controller.submit('agent', { owner: undefined, signal: undefined, overflow: undefined, deadline: undefined, queueTimeoutMs: undefined })).status).toBe(
          'granted',
        );
      });

      it('acquire and run turn invalid options into rejections, and fn never runs', async () => {
        const { controller } = await setup();
        const fn = jest.fn();
        let acquired: Promise<unknown> | undefined;
        expect(() => (acquired = controller.acquire('agent', { overflow: 'never' } as unknown as AdmissionRequestOptions))).not.toThrow();
        await expect(acquired).rejects.toMatchObject({ code: 'invalid_admission_options', details: { field: 'overflow' } });
        await expect(controller.run('agent', fn, { deadline: NaN })).rejects.toMatchObject({ details: { field: 'deadline' } });
        await expect(controller.run('agent', fn, { signal: {} as AbortSignal })).rejects.toMatchObject({ details: { field: 'signal' } });
        await expect(controller.run('agent', fn, throwingGetter('signal') as AdmissionRequestOptions)).rejects.toMatchObject({
          code: 'invalid_admission_options',
        });
        expect(fn).not.toHaveBeenCalled();
      });
    });

    describe('overflow, deadline and queueTimeoutMs', () => {
      it('a request overflow overrides the configured one, both ways', async () => {
        const rejecting = (await setup({ globalLimit: 1 })).controller;
        await rejecting.submit('a');
        expect((await rejecting.submit('a', { overflow: 'queue' })).status).toBe('queued');
        const queueing = (await setup({ globalLimit: 1, overflow: 'queue' })).controller;
        await queueing.submit('a');
        expect((await refusal(() => queueing.submit('a', { overflow: 'reject' }))).code).toBe('concurrency_limit_reached');
        expect((await queueing.submit('a')).status).toBe('queued');
      });

      it('queueTimeoutMs becomes now + queueTimeoutMs at submit', async () => {
        const { controller, clock } = await setup({ globalLimit: 1, overflow: 'queue' });
        await controller.submit('a');
        clock.advance(500);
        expect(await controller.submit('a', { queueTimeoutMs: 250 })).toMatchObject({ deadline: 1750 });
        expect(await controller.submit('a', { queueTimeoutMs: 'infinity' })).toMatchObject({ deadline: 'infinity' });
        expect(await controller.submit('a', { queueTimeoutMs: Infinity })).toMatchObject({ deadline: 'infinity' });
      });

      it('deadline wins over queueTimeoutMs and may be any finite number, fractions included', async () => {
        const { controller } = await setup({ globalLimit: 1, overflow: 'queue' });
        await controller.submit('a');
        expect(await controller.submit('a', { deadline: 1010.25, queueTimeoutMs: 5000 })).toMatchObject({ deadline: 1010.25 });
        expect(await controller.submit('a', { deadline: 'infinity', queueTimeoutMs: 5 })).toMatchObject({ deadline: 'infinity' });
        expect(await controller.submit('a', { deadline: Infinity })).toMatchObject({ deadline: 'infinity' });
        expect((await refusal(() => controller.submit('a', { deadline: -5, queueTimeoutMs: 5000 }))).code).toBe('queue_deadline_exceeded');
      });
    });

    describe('owner and signal', () => {
      it('signal abort while queued removes the request: waiters get signal.reason, telemetry requester_down', async () => {
        const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
        await controller.submit('a');
        const caller = new AbortController();
        const waiting = controller.acquire('a', { signal: caller.signal });
        const reason = new Error('caller left');
        caller.abort(reason);
        await expect(waiting).rejects.toBe(reason);
        await settle();
        expect(outcomes()).toEqual(['granted', 'queued', 'requester_down']);
        expect(controller.status().queue_length).toBe(0);
      });

      it('owner abort while queued removes the request: waiters get owner_down, telemetry owner_down', async () => {
        const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
        await controller.submit('a');
        const owner = new AbortController();
        const waiting = controller.acquire('a', { owner: owner.signal });
        owner.abort(new Error('owner reason is not used'));
        await expect(waiting).rejects.toMatchObject({ code: 'owner_down' });
        await settle();
        expect(outcomes()).toEqual(['granted', 'queued', 'owner_down']);
      });

      it('the same object as owner and signal: waiters get signal.reason, telemetry owner_down', async () => {
        const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
        await controller.submit('a');
        const both = new AbortController();
        const waiting = controller.acquire('a', { owner: both.signal, signal: both.signal });
        const reason = new Error('gone');
        both.abort(reason);
        await expect(waiting).rejects.toBe(reason);
        await settle();
        expect(outcomes()).toEqual(['granted', 'queued', 'owner_down']);
      });

      it.each(['signal first', 'owner first'])('owner and signal aborting together (%s): signal.reason and owner_down', async (order) => {
        const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
        await controller.submit('a');
        const owner = new AbortController();
        const caller = new AbortController();
        const reason = new Error('both');
        // a listener registered before the controller's aborts the other signal inside the same abort
        if (order === 'signal first') caller.signal.addEventListener('abort', () => owner.abort());
        else owner.signal.addEventListener('abort', () => caller.abort(reason));
        const waiting = controller.acquire('a', { owner: owner.signal, signal: caller.signal });
        if (order === 'signal first') caller.abort(reason);
        else owner.abort();
        await expect(waiting).rejects.toBe(reason);
        await settle();
        expect(outcomes()).toEqual(['granted', 'queued', 'owner_down']);
      });

      it('owner abort while active revokes: the slot returns, permit.signal aborts owner_down, a later release is false', async () => {
        const { controller, outcomes, settle } = await setup();
        const owner = new AbortController();
        const result = await controller.submit('a', { owner: owner.signal });
        if (result.status !== 'granted') throw new Error('expected a grant');
        owner.abort();
        expect(controller.status().active).toBe(0);
        expect(result.permit.signal.reason).toMatchObject({ code: 'permit_revoked', details: { outcome: 'owner_down' } });
        expect(controller.release(result.permit)).toBe(false);
        await settle();
        expect(outcomes()).toEqual(['granted', 'owner_down']);
      });

      it('signal abort after the grant never revokes', async () => {
        const { controller, outcomes, settle } = await setup({ globalLimit: 1, overflow: 'queue' });
        const first = await controller.submit('a');
        const caller = new AbortController();
        const waiting = controller.acquire('a', { signal: caller.signal });
        const immediate = new AbortController();
        // the request is queued before the cancel, as a synchronous submit leaves it
        await settle();
        controller.cancel(first.requestRef);
        const permit = await waiting;
        caller.abort();
        expect(permit.signal.aborted).toBe(false);
        expect(controller.status().active).toBe(1);
        controller.release(permit);
        const granted = await controller.acquire('b', { signal: immediate.signal });
        immediate.abort();
        expect(granted.signal.aborted).toBe(false);
        await settle();
        expect(outcomes()).toEqual(['granted', 'queued', 'cancelled', 'granted', 'released', 'granted']);
      });

      it('without an owner a permit lives until release or cancel', async () => {
        const { controller, clock } = await setup();
        const result = await controller.submit('a', { queueTimeoutMs: 1 });
        clock.advance(10 ** 9);
        expect(controller.status().active).toBe(1);
        expect(controller.cancel(result.requestRef)).toBe(true);
      });
    });
  });
});
