import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AdmissionController } from '../admission/admission-controller';
import type { AdmissionStatus } from '../admission/admission.types';
import { ReadinessService } from '../health/readiness.service';
import type { ReadinessReport } from '../health/readiness-report';

/** `GET /admission/status`: the controller's aggregate, content-free status record. */
@Controller('admission')
export class AdmissionStatusController {
  constructor(private readonly admission: AdmissionController) {}

  @Get('status')
  status(): AdmissionStatus {
    return this.admission.status();
  }
}

/** Liveness checks nothing external; readiness aggregates every configured component's indicator. */
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** A plain handler: it checks nothing, so it answers 200 during shutdown too. */
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
