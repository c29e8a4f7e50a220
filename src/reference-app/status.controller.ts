import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { AdmissionService } from '../admission/admission-service';
import { ADMISSION_SERVICE } from '../admission/admission.constants';
import type { AdmissionStatus } from '../admission/admission.types';
import { ReadinessService } from '../health/readiness.service';
import type { ReadinessReport } from '../health/readiness-report';

/** `GET /admission/status`: the controller's aggregate, content-free status record. */
@Controller('admission')
export class AdmissionStatusController {
  constructor(@Inject(ADMISSION_SERVICE) private readonly admission: AdmissionService) {}

  @Get('status')
  status(): AdmissionStatus {
    return this.admission.status();
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
