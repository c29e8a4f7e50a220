import { HttpException, Injectable, type PipeTransform } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import type { ErrorDetails } from '../shared/errors/agent-runtime-error';
import { requestErrorAnswer } from './http-failure-answers';
import { isPlainObject } from '../shared/options/plain-object';

/** The constraint class-validator reports for a key the DTO does not declare (`forbidNonWhitelisted`). */
const UNKNOWN_KEY_CONSTRAINT = 'whitelistValidation';

/**
 * An `exceptionFactory` for Nest's `ValidationPipe`: 400 `invalid_request_body` naming the DTO's
 * own properties that failed (`{field}` or sorted `{fields}`, nested ones as `a.b`) and only the
 * count of keys the DTO does not declare (`unknown_fields`), since those names come from the
 * client. Constraint messages and values are never sent.
 *
 * @example
 * new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, exceptionFactory: requestValidationExceptionFactory })
 */
export function requestValidationExceptionFactory(errors: ValidationError[]): HttpException {
  const fields = new Set<string>();
  let unknown = 0;
  const pending: Array<{ error: ValidationError; path: string }> = errors.map((error) => ({ error, path: String(error.property) }));
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { error, path } = next;
    const constraints = Object.keys(error.constraints ?? {});
    if (constraints.includes(UNKNOWN_KEY_CONSTRAINT)) unknown++;
    else if (constraints.length > 0) fields.add(path);
    for (const child of error.children ?? []) pending.push({ error: child, path: `${path}.${String(child.property)}` });
  }
  return invalidBody(fieldDetails([...fields].sort(), unknown));
}

/**
 * Refuses a body that is not a JSON object with 400 `invalid_request_body` (`{field: 'body'}`): no
 * body, or one of a content type no body parser read, such as `text/plain`.
 *
 * @example
 * handle(@Body(JsonObjectBodyPipe) body: Record<string, unknown>) {}
 */
@Injectable()
export class JsonObjectBodyPipe implements PipeTransform<unknown, Record<string, unknown>> {
  transform(value: unknown): Record<string, unknown> {
    if (!isPlainObject(value)) throw invalidBody({ field: 'body' });
    return value;
  }
}

function fieldDetails(fields: string[], unknown: number): ErrorDetails {
  const named: ErrorDetails = fields.length === 1 ? { field: fields[0] } : fields.length > 1 ? { fields } : {};
  return unknown > 0 ? { ...named, unknown_fields: unknown } : named;
}

function invalidBody(details: ErrorDetails): HttpException {
  const answer = requestErrorAnswer('invalid_request_body', details);
  return new HttpException(answer.body, answer.status);
}
