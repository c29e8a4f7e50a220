import { Controller, Get, Inject, NotFoundException, Param } from '@nestjs/common';
import { InvocationLedger } from '../ledger/invocation-ledger';
import type { InvocationRecord } from '../ledger/invocation-record';

/** `GET /invocations/:id`: the ledger's public record (never the owner token). */
@Controller('invocations')
export class InvocationsController {
  constructor(@Inject(InvocationLedger) private readonly ledger: InvocationLedger) {}

  /** 404 only when there is no record; a ledger failure (an outage) propagates to the error filter. */
  @Get(':id')
  async get(@Param('id') id: string): Promise<InvocationRecord> {
    const record = await this.ledger.get(id);
    if (!record) throw new NotFoundException({ status_code: 404, error: 'Not Found', code: 'not_found' });
    return record;
  }
}
