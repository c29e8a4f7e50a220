import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { AdmissionController } from '../admission/admission-controller';
import { AdmissionHealthIndicator } from '../admission/admission.health';
import type { AdmissionStatus } from '../admission/admission.types';
import { DatabaseHealthIndicator } from '../database/database.health';
import { LedgerHealthIndicator } from '../ledger/ledger.health';

/** `GET /admission/status`: the controller's aggregate, content-free status record. */
@Controller('admission')
export class AdmissionStatusController {
  constructor(private readonly admission: AdmissionController) {}

  @Get('status')
  status(): AdmissionStatus {
    return this.admission.status();
  }
}

/** Liveness checks nothing external; readiness aggregates the components' indicators. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly admission: AdmissionHealthIndicator,
    private readonly database: DatabaseHealthIndicator,
    private readonly ledger: LedgerHealthIndicator,
  ) {}

  /** A plain handler: terminus answers 503 to every check once it begins shutting down. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.admission.isHealthy(), () => this.database.isHealthy(), () => this.ledger.isHealthy()]);
  }
}
