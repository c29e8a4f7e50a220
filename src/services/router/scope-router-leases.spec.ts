import { answer, flush, outcome, routerFixture, scope, stalledOperation, startedRouter } from './testing/router-fixture';


describe('ScopeRouter — leases (spec 07 §4)', () => {
  it('counts a lease from resolve until release, which is idempotent', async () => {
    const { router } = await startedRouter();
    const first = await router.resolve(scope('u1'));
    const second = await router.resolve(scope('u1'));
    expect(first.worker.leaseCount).toBe(2);
    expect(first.lease.incarnation).toBe(first.worker.incarnation);
    expect(first.lease.release()).toBe(true);
    expect(first.lease.release()).toBe(false);
    expect(first.lease.held).toBe(false);
    expect(second.worker.leaseCount).toBe(1);
    expect(second.lease.release()).toBe(true);
    expect(second.worker.leaseCount).toBe(0);
  });

  it('ends a lease on abort of its borrower signal, once, so a later release does nothing', async () => {
    const { router } = await startedRouter();
    const borrower = new AbortController();
    const { worker, lease } = await router.resolve(scope('u1'), { signal: borrower.signal });
    const other = await router.resolve(scope('u1'));
    expect(worker.leaseCount).toBe(2);
    borrower.abort();
    expect(lease.held).toBe(false);
    expect(worker.leaseCount).toBe(1);
    expect(lease.release()).toBe(false);
    expect(worker.leaseCount).toBe(1);
    other.lease.release();
  });

  it('holds a lease for every run() operation until it settles', async () => {
    const { router } = await startedRouter();
    const { worker, lease } = await router.resolve(scope('u1'));
    const stalled = stalledOperation();
    const running = router.run(scope('u1'), stalled.operation);
    const queued = router.run(scope('u1'), stalled.operation);
    await flush();
    expect(worker.leaseCount).toBe(3);
    stalled.calls[0].result.resolve('one');
    await running;
    expect(worker.leaseCount).toBe(2);
    await flush();
    stalled.calls[1].result.reject(new Error('x'));
    await queued.catch(() => undefined);
    expect(worker.leaseCount).toBe(1);
    lease.release();
  });

  it('drops a run() lease when its caller leaves, even while the operation still runs', async () => {
    const { router, clock } = await startedRouter();
    const { worker, lease } = await router.resolve(scope('u1'));
    const stalled = stalledOperation();
    const running = router.run(scope('u1'), stalled.operation, { timeoutMs: 10 });
    await flush();
    expect(worker.leaseCount).toBe(2);
    clock.advance(10);
    expect(await outcome(running)).toBe('timeout');
    expect(worker.leaseCount).toBe(1);
    stalled.calls[0].result.resolve('late');
    await flush();
    expect(worker.leaseCount).toBe(1);
    lease.release();
  });

  it('runs worker operations while the lease is held, by default bound to the borrower signal', async () => {
    const { router } = await startedRouter();
    const borrower = new AbortController();
    const { worker, lease } = await router.resolve(scope('u1'), { signal: borrower.signal });
    await expect(worker.run((s) => Promise.resolve(s.userId))).resolves.toBe('u1');
    const stalled = stalledOperation();
    const pending = worker.run(stalled.operation);
    await flush();
    borrower.abort();
    expect(await outcome(pending)).toBe('scope_route_caller_unavailable');
    expect(stalled.calls[0].call.signal.aborted).toBe(true);
    await expect(worker.run(answer(1))).rejects.toMatchObject({ code: 'scope_route_caller_unavailable' });
    expect(lease.held).toBe(false);
  });

  it('checks the time and signal of each worker operation', async () => {
    const { router } = await startedRouter();
    const { worker, lease } = await router.resolve(scope('u1'));
    const op = jest.fn(answer(1));
    const aborted = new AbortController();
    aborted.abort();
    await expect(worker.run(op, { timeoutMs: 0 })).rejects.toMatchObject({ code: 'timeout' });
    await expect(worker.run(op, { signal: aborted.signal })).rejects.toMatchObject({ code: 'scope_route_caller_unavailable' });
    await expect(worker.run(op, { timeoutMs: 'soon' as never })).rejects.toMatchObject({ details: { reason: 'invalid_call_options' } });
    await expect(worker.run('nope' as never)).rejects.toBeInstanceOf(TypeError);
    expect(op).not.toHaveBeenCalled();
    expect(lease.held).toBe(true);
    lease.release();
  });

  it('refuses worker operations once the lease was released', async () => {
    const { router } = await startedRouter();
    const { worker, lease } = await router.resolve(scope('u1'));
    lease.release();
    await expect(worker.run(answer(1))).rejects.toMatchObject({ code: 'scope_route_caller_unavailable' });
  });

  it('a late release cannot touch a replacement worker of the same scope', async () => {
    const { router, clock } = await startedRouter({ maxActiveScopes: 1, idleScopeTimeoutMs: 10 });
    const borrower = new AbortController();
    const old = await router.resolve(scope('a'), { signal: borrower.signal });
    borrower.abort();
    clock.advance(10);
    await router.run(scope('b'), answer(1));
    clock.advance(10);
    const replacement = await router.resolve(scope('a'));
    expect(replacement.worker.incarnation).not.toBe(old.worker.incarnation);
    expect(router.status().idle_evictions).toBe(2);
    expect(old.lease.release()).toBe(false);
    expect(replacement.worker.leaseCount).toBe(1);
    expect(replacement.lease.held).toBe(true);
    replacement.lease.release();
  });

  it('a lease handed out under shared routing counts on the one worker', async () => {
    const { router } = await startedRouter({ routing: 'shared', durable: false });
    const a = await router.resolve(scope('a'));
    const b = await router.resolve(scope('b'));
    expect(a.worker.incarnation).toBe(b.worker.incarnation);
    expect(a.worker.leaseCount).toBe(2);
    await expect(b.worker.run((s) => Promise.resolve(s.userId))).resolves.toBe('b');
    a.lease.release();
    b.lease.release();
    expect(a.worker.leaseCount).toBe(0);
  });
});
