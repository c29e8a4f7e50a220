import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { JsonObjectBodyPipe, requestValidationExceptionFactory } from './request-body-validation.pipe';
import { thrown } from '../shared/testing/thrown';

const CANARY = 'canary_key_7f3a';

class Inner {
  @IsInt()
  count!: number;
}

class Outer {
  @IsString()
  name!: string;

  @IsOptional() @ValidateNested() @Type(() => Inner)
  inner?: Inner;
}

const pipe = new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, exceptionFactory: requestValidationExceptionFactory });
const metadata: ArgumentMetadata = { type: 'body', metatype: Outer };

async function refusal(value: unknown) {
  const error = await pipe.transform(value, metadata).then(() => undefined, (caught: { getStatus(): number; getResponse(): unknown }) => caught);
  return { status: error?.getStatus(), body: error?.getResponse() };
}

describe('requestValidationExceptionFactory', () => {
  it('names one failed DTO property as {field}, several sorted as {fields}, nested as a path', async () => {
    expect(await refusal({ name: 1 })).toEqual({ status: 400, body: { status_code: 400, error: 'Bad Request', code: 'invalid_request_body', details: { field: 'name' } } });
    expect((await refusal({ name: 1, inner: { count: 'x' } })).body).toMatchObject({ details: { fields: ['inner.count', 'name'] } });
  });

  it('counts keys the DTO does not declare and never names them', async () => {
    const { body } = await refusal({ name: 'a', [CANARY]: 1, inner: { count: 1, [CANARY]: 2 } });
    expect(body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_request_body', details: { unknown_fields: 2 } });
    expect(JSON.stringify(body)).not.toContain(CANARY);
  });
});

describe('JsonObjectBodyPipe', () => {
  it('passes a JSON object and refuses anything else with 400 invalid_request_body', () => {
    expect(new JsonObjectBodyPipe().transform({ a: 1 })).toEqual({ a: 1 });
    for (const value of [undefined, 'prompt=x', [], null]) {
      const error = thrown(() => new JsonObjectBodyPipe().transform(value)) as { getResponse(): unknown };
      expect(error.getResponse()).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_request_body', details: { field: 'body' } });
    }
  });
});
