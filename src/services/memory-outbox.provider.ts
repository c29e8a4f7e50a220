import { Inject, Injectable } from '@nestjs/common';
import type { OutboxEnqueueRequest, OutboxEnqueueResult, OutboxHealthRecord } from './outbox/outbox.types';
import { RuntimeServiceSupervisor } from './bundle/runtime-service-supervisor';
import { RuntimeServiceError } from './runtime-service.errors';

/**
 * The memory outbox of the current generation (spec 07 §6.5): every call goes to the outbox of
 * the generation running at that moment, so an injected `MemoryOutbox` never holds a stopped one.
 * Without a running durable generation a call rejects with `memory_outbox_runtime_required`.
 */
@Injectable()
export class MemoryOutbox {
  constructor(@Inject(RuntimeServiceSupervisor) private readonly supervisor: RuntimeServiceSupervisor) {}

  /** Enqueues session events for ingestion (spec 07 §6.3). */
  enqueue(request: OutboxEnqueueRequest): Promise<OutboxEnqueueResult> {
    return this.current().then((outbox) => outbox.enqueue(request));
  }

  /** The current outbox's health record (spec 07 §6.5). */
  health(): Promise<OutboxHealthRecord> {
    return this.current().then((outbox) => outbox.health());
  }

  private async current() {
    let outbox;
    try {
      outbox = this.supervisor.services().memoryOutbox;
    } catch {
      outbox = undefined;
    }
    if (outbox === undefined) throw new RuntimeServiceError('memory_outbox_runtime_required');
    return outbox;
  }
}
