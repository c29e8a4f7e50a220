import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import type { HttpErrorTable } from './http-error-mapper';

const PRINCIPAL_ERROR_CODES = Object.freeze(['unauthenticated', 'not_found'] as const);

/** Every code a {@link PrincipalError} carries. */
export type PrincipalErrorCode = (typeof PRINCIPAL_ERROR_CODES)[number];

/**
 * Why a request has no principal: `unauthenticated` (401) when the application's `resolvePrincipal`
 * answered `null`, threw or answered something that is not `{id, roles?}`; `not_found` (404) when the
 * module has no resolver and anonymous use was not chosen, so its routes answer as if absent. The
 * error never carries what the request sent.
 */
export class PrincipalError extends AgentRuntimeError<PrincipalErrorCode> {
  /** Every code of {@link PrincipalErrorCode}. */
  static readonly codes: readonly PrincipalErrorCode[] = PRINCIPAL_ERROR_CODES;

  /** The HTTP answer of each code. */
  static readonly httpAnswers: HttpErrorTable<PrincipalErrorCode> = Object.freeze({
    unauthenticated: { status: 401 },
    not_found: { status: 404 },
  });

  constructor(code: PrincipalErrorCode) {
    super('PrincipalError', code);
  }
}
