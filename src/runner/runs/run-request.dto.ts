import { type ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { Allow, IsBoolean, IsDefined, IsOptional, IsString, Length, Matches, ValidateBy, type ValidationError } from 'class-validator';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import { isPlainObject } from '../../shared/options/plain-object';
import { requestValidationExceptionFactory } from '../../http/request-body-validation.pipe';
import type { JsonValue, Message } from '../content.types';
import { isStorableMessage } from '../loop/message';
import { RunnerError } from '../runner.errors';
import { TOKEN_ID_PATTERN } from '../../shared/ids/id-rule';

/** A string, or a user Content `{role: 'user', parts}` (spec 03 §2), that the session stores keep (no U+0000, no lone surrogate). */
const IsRunMessage = () => ValidateBy({ name: 'isRunMessage', validator: { validate: isStorableMessage } });

/** Body of `POST /runs`. */
export class StartRunBody {
  /** The root agent's name. */
  @IsString() @Length(1, 256)
  agent!: string;

  /** `^[A-Za-z0-9._:-]{1,128}$`; generated when absent. */
  @IsOptional() @IsString() @Matches(TOKEN_ID_PATTERN)
  session_id?: string;

  @IsDefined() @IsRunMessage()
  message!: Message;

  /** @default false */
  @IsOptional() @IsBoolean()
  durable?: boolean;
}

/** Body of `POST /runs/:id/cancel` (the body itself may be absent). */
export class CancelRunBody {
  /** 1..128 characters. @default 'cancelled' */
  @IsOptional() @IsString() @Length(1, 128)
  reason?: string;
}

/** Body of `POST /runs/:id/confirmations/:callId`. */
export class ConfirmationBody {
  @IsBoolean()
  confirmed!: boolean;

  /** Any JSON value, within the policy's content budget. */
  @Allow()
  payload?: JsonValue;
}

/**
 * The `ValidationPipe` of the runs routes (`whitelist`, `forbidNonWhitelisted`): a body that is
 * not a JSON object, or fails its DTO, is `invalid_run_request` with `{field}`/`{fields}` of the
 * DTO's own properties and only the count of unknown keys (`unknown_fields`), never their names or
 * the values sent. With `optional`, an absent body counts as `{}`.
 */
export class RunBodyPipe extends ValidationPipe {
  constructor(private readonly optional = false) {
    super({ whitelist: true, forbidNonWhitelisted: true, exceptionFactory: invalidRunBody });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const body = value === undefined && this.optional ? {} : value;
    if (!isPlainObject(body)) throw new RunnerError('invalid_run_request', { field: 'body' });
    return super.transform(body, metadata);
  }
}

function invalidRunBody(errors: ValidationError[]): RunnerError {
  // the shared factory decides which names may be shown; only its details are kept
  const answer = requestValidationExceptionFactory(errors).getResponse() as { details?: ErrorDetails };
  return new RunnerError('invalid_run_request', answer.details ?? {});
}
