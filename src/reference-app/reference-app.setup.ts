import type { INestApplication } from '@nestjs/common';
import { EvalServiceError } from '../evaluation/eval.errors';
import { useJsonBodyLimits } from '../http/json-body-limits';

/** Largest `/evaluations` body: the evaluation request limit of spec 05 §4.1. */
const EVALUATION_BODY_LIMIT = 2 * 1024 * 1024;

/**
 * What the reference service sets up on its app before it listens: the JSON body size and depth
 * limits (100 kB; 2 MiB for `/evaluations`, whose refusals answer with the evaluation limit code).
 */
export function setUpReferenceApp(app: INestApplication): void {
  useJsonBodyLimits(app, {
    routes: [
      {
        path: '/evaluations',
        limit: EVALUATION_BODY_LIMIT,
        refusal: (code) => new EvalServiceError('evaluation_request_limit_exceeded', { limit: code === 'body_too_deep' ? 'depth' : 'bytes' }),
      },
    ],
  });
}
