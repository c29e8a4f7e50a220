import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AdmissionService } from '../admission/admission-service';
import { ADMISSION_SERVICE } from '../admission/admission.constants';
import type { AdmissionStatus } from '../admission/admission.types';
import { statusWithoutTenantIds } from '../admission/status-without-tenants';
import type { ResolvePrincipal } from '../http/principal';
import { isApprover } from './reference-auth';
import { ReadinessService } from '../health/readiness.service';
import type { ReadinessReport } from '../health/readiness-report';

/** Injection token of the reference service's principal resolver (the demo users' bearer tokens). */
export const REFERENCE_PRINCIPALS = Symbol('REFERENCE_PRINCIPALS');

/**
 * `GET /admission/status`: the controller's aggregate, content-free status record. Tenant ids (which
 * name customers) only for an approver; anyone else sees every tenant folded into `other_tenants`.
 */
@Controller('admission')
export class AdmissionStatusController {
  constructor(
    @Inject(ADMISSION_SERVICE) private readonly admission: AdmissionService,
    @Inject(REFERENCE_PRINCIPALS) private readonly resolvePrincipal: ResolvePrincipal,
  ) {}

  @Get('status')
  async status(@Req() request: Request): Promise<AdmissionStatus> {
    const principal = await this.resolvePrincipal(request);
    const status = this.admission.status();
    return principal !== null && isApprover(principal) ? status : statusWithoutTenantIds(status);
  }
}

/** Liveness checks nothing external; readiness aggregates every configured component's indicator. */
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /**
   * 200 while the process can serve: it checks nothing external and no component that depends on the
   * database (a stopped one is restarted in-process), and answers during shutdown too.
   */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** 200 when every component is up, else 503; either way the body names every component. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) response: Response): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    response.status(report.status === 'ok' ? 200 : 503);
    return report;
  }
}
