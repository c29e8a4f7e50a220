import { Controller, Get, Header, Inject, Res, type Type } from '@nestjs/common';
import { RuntimeMetrics } from './runtime-metrics';

/** The part of an Express response or a Fastify reply the controller uses. */
interface HeaderSetter {
  header(name: string, value: string): unknown;
}

/**
 * The controller answering `GET <path>` with the exposition text, built per module declaration
 * because a Nest route path is fixed when its class is decorated. It carries no admission or policy
 * metadata, so neither the admission guard nor the policy interceptor acts on it, even globally bound.
 */
export function metricsController(path: string): Type<unknown> {
  @Controller()
  class MetricsController {
    constructor(@Inject(RuntimeMetrics) private readonly metrics: RuntimeMetrics) {}

    @Get(path)
    @Header('Cache-Control', 'no-store')
    async scrape(@Res({ passthrough: true }) response: HeaderSetter): Promise<string> {
      const text = await this.metrics.metrics();
      response.header('Content-Type', this.metrics.contentType);
      return text;
    }
  }
  return MetricsController;
}
