import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/**
 * Readiness of the database: `up` when `SELECT 1` answers within `timeoutMs`, `down` otherwise.
 * The result names the component only; driver error text never reaches a probe's response.
 */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly health: HealthIndicatorService,
  ) {}

  async isHealthy(key = 'database', timeoutMs = 1000): Promise<HealthIndicatorResult> {
    const indicator = this.health.check(key);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
    const ping = this.dataSource.query('SELECT 1').then(
      () => true,
      () => false,
    );
    const answered = await Promise.race([ping, timeout]).finally(() => clearTimeout(timer));
    return answered ? indicator.up() : indicator.down();
  }
}
