import type { ExecutionContext } from '@nestjs/common';
import { resolveAdmissionConfig } from '../admission/admission-config';
import { referenceAdmissionConfig, TRIAL_TENANT } from './reference-config';
import { ANONYMOUS_TENANT, tenantOf } from './reference-tenant';

/** A request as Node gives it: `headersDistinct` holds each header's copies, `headers` them joined. */
const contextWith = (headers: Record<string, unknown>, headersDistinct = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]))) =>
  ({ switchToHttp: () => ({ getRequest: () => ({ headers, headersDistinct }) }) }) as unknown as ExecutionContext;

describe('the reference service tenants', () => {
  it('reads the tenant from x-tenant-id, as the client sent it', () => {
    expect(tenantOf(contextWith({ 'x-tenant-id': 'acme' }))).toBe('acme');
    expect(tenantOf(contextWith({ 'x-tenant-id': 'acme, globex' }))).toBe('acme, globex');
    expect(tenantOf(contextWith({ 'x-tenant-id': 'acme' }, { 'x-tenant-id': ['acme'], accept: ['*/*'] }))).toBe('acme');
    // an empty value is passed on, so the guard refuses it (400) instead of it silently becoming anonymous
    expect(tenantOf(contextWith({ 'x-tenant-id': '' }))).toBe('');
  });

  it('answers a repeated header (joined by Node into a new id) with an id the guard refuses', () => {
    expect(tenantOf(contextWith({ 'x-tenant-id': 'trial, trial' }, { 'x-tenant-id': ['trial', 'trial'] }))).toBe('');
    expect(tenantOf(contextWith({ 'x-tenant-id': 'evil, trial' }, { 'x-tenant-id': ['evil', 'trial'] }))).toBe('');
  });

  it('puts calls without the header in the anonymous tenant', () => {
    expect(tenantOf(contextWith({}))).toBe(ANONYMOUS_TENANT);
    expect(tenantOf(contextWith({ authorization: 'Bearer alice-token' }))).toBe(ANONYMOUS_TENANT);
  });

  it('configures a tenant limit of 3 of the global 4, equal weights and the trial tenant’s rate, all overridable', () => {
    const resolved = resolveAdmissionConfig(referenceAdmissionConfig({}));
    expect(resolved.flowControl).toBe(true);
    expect(resolved.globalLimit).toBe(4);
    expect(resolved.flow.defaultTenantLimit).toBe(3);
    expect(resolved.flow.tenantWeights.size).toBe(0);
    expect(resolved.flow.tenantRates.get(TRIAL_TENANT)).toEqual({ requestsPerMs: 6 / 60_000, burst: 2, costPerMs: undefined, burstCost: Infinity });
    expect(resolved.flow.defaultTenantRate).toBeUndefined();

    const tuned = resolveAdmissionConfig(referenceAdmissionConfig({ ADMISSION_TENANT_LIMIT: '1', ADMISSION_TRIAL_REQUESTS_PER_MINUTE: '60', ADMISSION_TRIAL_BURST: '5' }));
    expect(tuned.flow.defaultTenantLimit).toBe(1);
    expect(tuned.flow.tenantRates.get(TRIAL_TENANT)).toMatchObject({ requestsPerMs: 60 / 60_000, burst: 5 });
  });
});
