import { rejected } from '../shared/testing/rejected';
import { ANONYMOUS_PRINCIPAL_ID, PrincipalGate, principalValue } from './principal';

describe('PrincipalGate: the principal of a request', () => {
  it('is disabled without a resolver and without allowAnonymous: not_found', async () => {
    const gate = new PrincipalGate({});
    expect(gate.enabled).toBe(false);
    expect(await rejected(gate.principalOf({}))).toMatchObject({ code: 'not_found' });
  });

  it('answers the resolver principal, frozen, roles defaulting to none', async () => {
    const principal = await new PrincipalGate({ resolvePrincipal: () => ({ id: 'alice', extra: 'ignored' }) }).principalOf({});
    expect(principal).toEqual({ id: 'alice', roles: [] });
    expect(Object.isFrozen(principal)).toBe(true);
    expect(await new PrincipalGate({ resolvePrincipal: async () => ({ id: 'op', roles: ['approver'] }) }).principalOf({})).toEqual({ id: 'op', roles: ['approver'] });
  });

  it.each([
    ['null', () => null],
    ['a throw', () => { throw new Error('token expired'); }],
    ['a rejection', () => Promise.reject(new Error('no'))],
    ['a string', () => 'alice'],
    ['an empty id', () => ({ id: '' })],
    ['an id with a control character', () => ({ id: 'a\u0000' })],
    ['roles that are not strings', () => ({ id: 'a', roles: [1] })],
    ['an id getter', () => ({ get id() { return 'a'; } })],
  ])('%s is unauthenticated', async (_name, resolvePrincipal) => {
    expect(await rejected(new PrincipalGate({ resolvePrincipal }).principalOf({}))).toMatchObject({ code: 'unauthenticated' });
  });

  it('allowAnonymous: no resolver, or a null answer, is the anonymous principal; a failing resolver is still unauthenticated', async () => {
    expect(await new PrincipalGate({ allowAnonymous: true }).principalOf({})).toEqual({ id: ANONYMOUS_PRINCIPAL_ID, roles: [] });
    expect(await new PrincipalGate({ allowAnonymous: true, resolvePrincipal: () => null }).principalOf({})).toEqual({ id: ANONYMOUS_PRINCIPAL_ID, roles: [] });
    expect(await rejected(new PrincipalGate({ allowAnonymous: true, resolvePrincipal: () => ({ id: '' }) }).principalOf({}))).toMatchObject({ code: 'unauthenticated' });
  });

  it('principalValue reads only plain data', () => {
    expect(principalValue(new (class { id = 'a'; })())).toBeNull();
    expect(principalValue({ id: 'a', roles: ['r'] })).toEqual({ id: 'a', roles: ['r'] });
  });
});
