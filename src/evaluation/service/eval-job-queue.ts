import { LinkedList, type ListNode } from '../../shared/collections/linked-list';
import type { EvalExecution, EvalJobRecord } from '../eval.types';

/** A job waiting for an active slot. */
export interface QueuedEvalJob extends ListNode<QueuedEvalJob> {
  readonly record: EvalJobRecord;
  readonly execution: EvalExecution;
  /** `request_bytes` of the job, counted against `maxQueueBytes`. */
  readonly bytes: number;
}

/** The FIFO of queued jobs with its byte count; remove by id in O(1). */
export class EvalJobQueue {
  readonly #list = new LinkedList<QueuedEvalJob>();
  readonly #byId = new Map<string, QueuedEvalJob>();
  #bytes = 0;

  get size(): number {
    return this.#list.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  push(record: EvalJobRecord, execution: EvalExecution): void {
    const node: QueuedEvalJob = { record, execution, bytes: record.request_bytes, prev: null, next: null };
    this.#list.push(node);
    this.#byId.set(record.job_id, node);
    this.#bytes += node.bytes;
  }

  /** The oldest job, removed. */
  shift(): QueuedEvalJob | undefined {
    const head = this.#list.head;
    if (head !== null) this.remove(head);
    return head ?? undefined;
  }

  /** The queued job `jobId` of `app`, removed; `undefined` when it is not queued here. */
  take(app: string, jobId: string): QueuedEvalJob | undefined {
    const node = this.#byId.get(jobId);
    if (node === undefined || node.record.scope_app !== app) return undefined;
    this.remove(node);
    return node;
  }

  /** Empties the queue (a stop leaves the rows for the next start to recover). */
  clear(): void {
    for (const node of [...this.#list]) this.remove(node);
  }

  private remove(node: QueuedEvalJob): void {
    this.#list.remove(node);
    this.#byId.delete(node.record.job_id);
    this.#bytes -= node.bytes;
  }
}
