import { thrown } from '../shared/testing/thrown';
import { referenceAuthorizeRun, referencePrincipalResolver, referenceUsers, referenceUsersNotice } from './reference-auth';

describe('the reference service demo authentication', () => {
  it('reads REFERENCE_USERS (name:token or name:token:role), the default when unset', () => {
    expect(referenceUsers({})).toEqual([
      { name: 'alice', token: 'alice-token', role: null },
      { name: 'bob', token: 'bob-token', role: null },
      { name: 'operator', token: 'operator-token', role: 'approver' },
    ]);
    expect(referenceUsers({ REFERENCE_USERS: 'carol:carol-secret-1:approver' })).toEqual([{ name: 'carol', token: 'carol-secret-1', role: 'approver' }]);
  });

  it.each(['carol', 'carol:short', 'carol:carol-token:approver:extra', 'a:aaaaaaaa,b:aaaaaaaa', ':no-name-token'])('refuses %p without echoing a token', (value) => {
    const error = thrown<Error>(() => referenceUsers({ REFERENCE_USERS: value }));
    expect(error.message).not.toMatch(/aaaaaaaa|carol-token|no-name-token/);
  });

  it('resolves Authorization: Bearer, else the reference_token cookie; anything else is null', () => {
    const resolve = referencePrincipalResolver(referenceUsers({}));
    expect(resolve({ headers: { authorization: 'Bearer operator-token' } })).toEqual({ id: 'operator', roles: ['approver'] });
    expect(resolve({ headers: { cookie: 'a=b; reference_token=bob-token' } })).toEqual({ id: 'bob', roles: [] });
    expect(resolve({ headers: { authorization: 'Bearer nope-token', cookie: 'reference_token=bob-token' } })).toBeNull();
    expect(resolve({ headers: {} })).toBeNull();
  });

  it('approvers may do everything but cancel; the notice names users and roles, never tokens', () => {
    const run = {} as never;
    expect(referenceAuthorizeRun({ id: 'operator', roles: ['approver'] }, 'confirm', run)).toBe(true);
    expect(referenceAuthorizeRun({ id: 'operator', roles: ['approver'] }, 'cancel', run)).toBe(false);
    expect(referenceAuthorizeRun({ id: 'bob', roles: [] }, 'read', run)).toBe(false);
    const notice = referenceUsersNotice(referenceUsers({}));
    expect(notice).toContain('operator (approver)');
    expect(notice).toMatch(/DEMO tokens/);
    expect(notice).not.toMatch(/-token/);
  });
});
