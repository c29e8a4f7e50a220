import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { systemClock } from '../shared/time/clock';
import { within } from '../shared/time/timeout';

/**
 * Readiness of the database: `up` when `SELECT 1` answers within `timeoutMs`, `down` otherwise.
 * The result names the component only; driver error text never reaches a probe's response. List it
 * as a provider to have `ReadinessService` include the default DataSource.
 */
@ReadinessIndicator('database')
@Injectable()
export class DatabaseHealthIndicator implements ComponentHealthIndicator {
  constructor(private readonly dataSource: DataSource) {}

  async isHealthy(key = 'database', timeoutMs = 1000): Promise<ComponentHealthResult> {
    const answered = await within(this.dataSource.query('SELECT 1'), timeoutMs, systemClock).then(
      () => true,
      () => false,
    );
    return indicatorResult(key, answered);
  }
}
