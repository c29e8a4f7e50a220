import { frozenJsonCopy } from '../../json';
import { untilAborted } from '../../shared/async/abortable';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isNonEmptyString } from '../../shared/options/option-rules';
import type { Model, ModelRequest, ModelResponse } from './model.types';
import { RunnerError } from '../runner.errors';

/**
 * One step of a {@link ScriptedModel}: the response itself, or a function computing it from the
 * request (it may wait on `signal` to model a slow call, or throw to model a failing one).
 */
export type ScriptedStep = ModelResponse | ((request: ModelRequest, signal: AbortSignal) => ModelResponse | Promise<ModelResponse>);

/** Options of a {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** The model's name. @default 'scripted' */
  name?: string;
}

/**
 * A deterministic {@link Model} without I/O, for tests and the reference app (spec 03 §3): each call
 * answers with the next step of the script. The cursor belongs to the instance; once the script is
 * used up a call rejects with `RunnerError('model_failed', {reason: 'script_exhausted'})`. A call
 * rejects with the signal's reason as soon as its signal aborts, also while a step function is still
 * running. Steps are returned as given (not copied), so a script can also hand the Runner a
 * malformed response on purpose.
 *
 * @example
 * const model = new ScriptedModel([
 *   { toolCalls: [{ name: 'lookup', args: { id: 7 } }] },
 *   (request) => ({ text: `saw ${request.contents.length} entries` }),
 * ]);
 */
export class ScriptedModel implements Model {
  readonly name: string;
  readonly #steps: readonly ScriptedStep[];
  readonly #calls: ModelRequest[] = [];
  #cursor = 0;

  /** Validates the script and options; throws `invalid_runner_options` with `{field}`. */
  constructor(steps: readonly ScriptedStep[], options?: ScriptedModelOptions) {
    if (!Array.isArray(steps) || !steps.every(isStep)) throw new RunnerError('invalid_runner_options', { field: 'steps' });
    const read = readOptions(options, { name: isNonEmptyString }, { name: 'options', unknownKeys: 'refuse' });
    if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
    this.name = (read.values.name as string | undefined) ?? 'scripted';
    this.#steps = Object.freeze([...steps]);
  }

  /** Deep-frozen copies of the requests received so far, in call order. */
  get calls(): readonly ModelRequest[] {
    return Object.freeze([...this.#calls]);
  }

  /** The next step's response; see the class description for exhaustion and aborts. */
  async generate(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    signal.throwIfAborted();
    const received = receivedCopy(request);
    this.#calls.push(received);
    if (this.#cursor >= this.#steps.length) throw new RunnerError('model_failed', { reason: 'script_exhausted' });
    const step = this.#steps[this.#cursor++];
    if (typeof step !== 'function') return step;
    return untilAborted(
      new Promise<ModelResponse>((resolve) => resolve(step(received, signal))),
      signal,
    );
  }
}

function isStep(step: unknown): boolean {
  return typeof step === 'function' || (typeof step === 'object' && step !== null && !Array.isArray(step));
}

function receivedCopy(request: ModelRequest): ModelRequest {
  try {
    return frozenJsonCopy(request);
  } catch {
    // the Runner only sends JSON-safe requests; a JsonError's path could name content
    throw new RunnerError('model_failed', { reason: 'invalid_response' });
  }
}
