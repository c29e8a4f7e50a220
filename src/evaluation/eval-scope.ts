import { randomBytes } from 'node:crypto';
import { readOwnData } from '../shared/options/option-reader';
import { EvalServiceError } from './eval.errors';
import type { EvalScope } from './eval.types';

/** Largest app name, in UTF-8 bytes. */
export const MAX_SCOPE_APP_BYTES = 256;

/** Postgres text cannot hold a lone surrogate: it would be stored as another string. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Job ids the store mints: `eval-` + 32 lowercase hex digits. */
export const EVAL_JOB_ID = /^eval-[0-9a-f]{32}$/;

/** The one minting of evaluation job ids (the store's jobs and the gate's candidate run): 128 random bits. */
export function newEvalJobId(): string {
  return `eval-${randomBytes(16).toString('hex')}`;
}

/** `{app}` with `app` 1..256 UTF-8 bytes and no U+0000, as a fresh frozen scope; else `invalid_eval_scope`. */
export function checkEvalScope(scope: unknown): EvalScope {
  const own = readOwnData(scope, ['app']);
  const app = own?.values.app;
  if (own === null || own.unknown.length > 0 || typeof app !== 'string' || app.length === 0 || app.includes('\u0000') || Buffer.byteLength(app, 'utf8') > MAX_SCOPE_APP_BYTES || LONE_SURROGATE.test(app)) {
    throw new EvalServiceError('invalid_eval_scope');
  }
  return Object.freeze({ app });
}

/** A job id that cannot be one the store minted is `not_found`, like an absent one. */
export function checkEvalJobId(jobId: unknown): string {
  if (typeof jobId !== 'string' || !EVAL_JOB_ID.test(jobId)) throw new EvalServiceError('not_found');
  return jobId;
}
