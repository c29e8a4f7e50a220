import type { OptionalFactoryDependency } from '@nestjs/common';
import type { TelemetrySink } from './telemetry-sink';

/**
 * Factory dependency that injects `EventEmitter2` when `@nestjs/event-emitter` is installed and its
 * module imported, and nothing otherwise: the event-emitter package stays an optional peer.
 */
export function optionalEventEmitter(): OptionalFactoryDependency[] {
  const token = loadEventEmitterToken();
  return token ? [{ token, optional: true }] : [];
}

/** The injected value of {@link optionalEventEmitter} as a telemetry sink (or `undefined`). */
export function asTelemetrySink(value: unknown): TelemetrySink | undefined {
  return value && typeof (value as TelemetrySink).emit === 'function' ? (value as TelemetrySink) : undefined;
}

function loadEventEmitterToken(): OptionalFactoryDependency['token'] | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('@nestjs/event-emitter') as { EventEmitter2: OptionalFactoryDependency['token'] }).EventEmitter2;
  } catch {
    return undefined;
  }
}
