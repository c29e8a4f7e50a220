import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../http/principal';
import { CONSOLE_OPTIONS, type ResolvedConsoleOptions } from './console-options';

/** The viewer of each console request, by request object (never written onto the request). */
const viewers = new WeakMap<object, Principal>();

/** The principal the {@link ConsoleViewerGuard} resolved for `request`; `null` without principal options. */
export function viewerOf(request: unknown): Principal | null {
  return typeof request === 'object' && request !== null ? (viewers.get(request) ?? null) : null;
}

/**
 * Resolves the console viewer with the console's principal options before every console route:
 * 401 `unauthenticated` without a principal. Without principal options it lets every request through
 * (the app's `guard`, or `allowUnauthenticated`, decided).
 */
@Injectable()
export class ConsoleViewerGuard implements CanActivate {
  constructor(@Inject(CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.options.principals.enabled) return true;
    const request = context.switchToHttp().getRequest<object>();
    viewers.set(request, await this.options.principals.principalOf(request));
    return true;
  }
}
