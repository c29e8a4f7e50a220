import type { SessionService } from '../../runner/session.types';
import type { GenerationGuard } from './generation-guard';

const METHODS = ['createSession', 'getSession', 'listSessions', 'deleteSession', 'appendEvent', 'listEvents', 'updateState'] as const;

/**
 * The generation's session service as it is handed out: each call checks the generation first, so a
 * Runner built from a stopped generation's spec fails with `runtime_service_generation_stale`
 * (surfacing as its `session_store_failed`) instead of writing through a replaced component.
 */
export function generationSessionService(service: SessionService, guard: GenerationGuard): SessionService {
  const bound = {} as Record<(typeof METHODS)[number], unknown>;
  for (const method of METHODS) {
    const call = (service[method] as (...args: unknown[]) => Promise<unknown>).bind(service);
    bound[method] = (...args: unknown[]) => guard.run(() => call(...args));
  }
  return Object.freeze(bound) as unknown as SessionService;
}
