import { denialError } from '../../runner/loop/event-recorder';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import type { ModelStreamPart } from './ai-sdk.types';
import type { PolicyGuard } from './policy-guard';

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/**
 * The final-output check of one streamed model response, applied as the stream is consumed. Text
 * deltas pass through while their running UTF-8 size is within `maxContentBytes`; the delta that
 * would cross it is never emitted: the denial is audited and the stream errors with
 * `runtime_policy_denied` (the model's stream is cancelled). So a consumer never receives more than
 * the budget, but may have received a prefix of an output that was then denied; it learns of the
 * denial from the stream's error, before any `finish` part. Within the budget, the whole text is
 * checked once more when the response finishes (which also denies a lone surrogate), so every
 * streamed response gets exactly one output decision, as a generated one does.
 */
export function streamedOutputBudget(guard: PolicyGuard): TransformStream<ModelStreamPart, ModelStreamPart> {
  const limit = guard.policy.maxContentBytes;
  let text = '';
  // exact UTF-8 size of `text`; a high surrogate ending a delta waits for the next one
  let bytes = 0;
  let pending = '';
  let decided = false;
  let denied = false;

  /** Audits a denial and errors the stream with it (or with the audit failure); false on deny. */
  const settle = async (decision: PolicyDecision, controller: TransformStreamDefaultController<ModelStreamPart>): Promise<boolean> => {
    if (decision.outcome === 'allow') return true;
    denied = true;
    try {
      await guard.recordDenial(decision);
      controller.error(denialError(decision));
    } catch (error) {
      controller.error(error);
    }
    return false;
  };

  /** The one decision of a response that stayed within the budget while streaming. */
  const decideWhole = (controller: TransformStreamDefaultController<ModelStreamPart>): Promise<boolean> => {
    decided = true;
    return settle(guard.decide('content', 'model_output', text + pending), controller);
  };

  return new TransformStream<ModelStreamPart, ModelStreamPart>({
    async transform(part, controller) {
      if (denied) return;
      if (part.type === 'text-delta' && !decided) {
        let added = pending + part.delta;
        pending = added.length > 0 && isHighSurrogate(added.charCodeAt(added.length - 1)) ? added.slice(-1) : '';
        if (pending !== '') added = added.slice(0, -1);
        text += added;
        bytes += Buffer.byteLength(added, 'utf8');
        if (bytes > limit && !(await settle(guard.decide('content', 'model_output', text), controller))) return;
      } else if (part.type === 'finish' && !decided && !(await decideWhole(controller))) {
        return;
      }
      controller.enqueue(part);
    },
    async flush(controller) {
      if (!decided && !denied) await decideWhole(controller);
    },
  });
}
