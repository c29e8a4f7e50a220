import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ReadinessService, type ReadinessReport } from 'nest-agent-runtime/health';

/** `GET /health/ready`: 200 with the report when every component is up, 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get('ready')
  async ready(): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    if (report.status !== 'ok') throw new ServiceUnavailableException(report);
    return report;
  }
}
