import { Controller, Get, Inject, Optional, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { AdmissionService } from '../admission/admission-service';
import { ADMISSION_SERVICE } from '../admission/admission.constants';
import type { AdmissionStatus } from '../admission/admission.types';
import { EvalService } from '../evaluation/service/eval-service';
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
  constructor(
    private readonly readiness: ReadinessService,
    @Optional() @Inject(EvalService) private readonly evaluation: EvalService | null,
  ) {}

  /**
   * Checks nothing external, so it answers 200 during shutdown too; 503 only once the evaluation
   * service stopped on a fault (spec 05 §6.1), which no in-process restart can mend.
   */
  @Get('live')
  live(@Res({ passthrough: true }) response: Response): { status: 'ok' } | { status: 'error'; down: readonly string[] } {
    if (this.evaluation?.isLive() ?? true) return { status: 'ok' };
    response.status(503);
    return { status: 'error', down: ['evaluation'] };
  }

  /** 200 when every component is up, else 503; either way the body names every component. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) response: Response): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    response.status(report.status === 'ok' ? 200 : 503);
    return report;
  }
}
