import { getEventListeners } from 'node:events';
import { thrown } from '../../shared/testing/thrown';
import type { ModelRequest } from './model.types';
import { RunnerError } from '../runner.errors';
import { ScriptedModel } from './scripted-model';

const request = (text: string): ModelRequest => ({
  instruction: 'be brief',
  contents: [{ role: 'user', content: { role: 'user', parts: [{ text }, { data: { n: [1, 2] } }] } }],
  tools: [{ name: 'lookup', parameters: { type: 'object' } }],
});

const live = () => new AbortController().signal;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('ScriptedModel (spec 03 §3)', () => {
  describe('construction', () => {
    it("is named 'scripted' unless a name is given", () => {
      expect(new ScriptedModel([]).name).toBe('scripted');
      expect(new ScriptedModel([], { name: 'planner' }).name).toBe('planner');
    });

    it.each<[string, unknown, unknown, Record<string, unknown>]>([
      ['steps that are not an array', { text: 'x' }, undefined, { field: 'steps' }],
      ['a step that is neither a response nor a function', [{ text: 'ok' }, 'text'], undefined, { field: 'steps' }],
      ['a null step', [null], undefined, { field: 'steps' }],
      ['an empty name', [], { name: '' }, { field: 'name' }],
      ['an unknown option', [], { nmae: 'x' }, { field: 'nmae' }],
      ['options that are not an object', [], 'scripted', { field: 'options' }],
    ])('refuses %s with invalid_runner_options', (_name, steps, options, details) => {
      const error = thrown(() => new ScriptedModel(steps as never, options as never), RunnerError);
      expect(error.code).toBe('invalid_runner_options');
      expect(error.details).toEqual(details);
    });

    it('keeps its own copy of the script', async () => {
      const steps = [{ text: 'first' }];
      const model = new ScriptedModel(steps);
      steps.push({ text: 'second' });
      await model.generate(request('a'), live());
      expect((await rejection(model.generate(request('b'), live())) as RunnerError).details).toEqual({ reason: 'script_exhausted' });
    });
  });

  describe('steps', () => {
    it('answers with the steps in order, a response step as given', async () => {
      const toolTurn = { toolCalls: [{ id: 'c1', name: 'lookup', args: { id: 7 } }] };
      const model = new ScriptedModel([toolTurn, { text: 'done', usage: { inputTokens: 3, outputTokens: 1 } }]);
      expect(await model.generate(request('a'), live())).toBe(toolTurn);
      expect(await model.generate(request('b'), live())).toEqual({ text: 'done', usage: { inputTokens: 3, outputTokens: 1 } });
    });

    it('calls a function step with the received request and the signal', async () => {
      const signal = live();
      const seen: unknown[] = [];
      const model = new ScriptedModel([
        (received, given) => {
          seen.push(received, given);
          return { text: `entries: ${received.contents.length}` };
        },
        async () => ({ text: 'async' }),
      ]);
      expect(await model.generate(request('a'), signal)).toEqual({ text: 'entries: 1' });
      expect(seen).toEqual([request('a'), signal]);
      expect(seen[0]).toBe(model.calls[0]);
      expect(await model.generate(request('b'), signal)).toEqual({ text: 'async' });
    });

    it('passes on what a function step throws or rejects with', async () => {
      const failure = new RunnerError('model_failed', { reason: 'http_status', status: 503 });
      const model = new ScriptedModel([
        () => {
          throw failure;
        },
        () => Promise.reject(failure),
      ]);
      expect(await rejection(model.generate(request('a'), live()))).toBe(failure);
      expect(await rejection(model.generate(request('b'), live()))).toBe(failure);
    });

    it('fails with model_failed script_exhausted once the script is used up, on every later call', async () => {
      const model = new ScriptedModel([{ text: 'only' }]);
      await model.generate(request('a'), live());
      for (const text of ['b', 'c']) {
        const error = await rejection(model.generate(request(text), live()));
        expect(RunnerError.isRunnerError(error)).toBe(true);
        expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'script_exhausted' } });
      }
      expect(model.calls).toHaveLength(3);
    });

    it('keeps one cursor per instance', async () => {
      const steps = [{ text: '1' }, { text: '2' }];
      const first = new ScriptedModel(steps);
      const second = new ScriptedModel(steps);
      expect(await first.generate(request('a'), live())).toEqual({ text: '1' });
      expect(await first.generate(request('a'), live())).toEqual({ text: '2' });
      expect(await second.generate(request('a'), live())).toEqual({ text: '1' });
    });

    it('gives concurrent calls consecutive steps in call order', async () => {
      const model = new ScriptedModel([async () => ({ text: 'slow' }), { text: 'fast' }]);
      const answers = await Promise.all([model.generate(request('a'), live()), model.generate(request('b'), live())]);
      expect(answers).toEqual([{ text: 'slow' }, { text: 'fast' }]);
    });
  });

  describe('calls', () => {
    it('records deep-frozen copies of the requests received, in order', async () => {
      const model = new ScriptedModel([{ text: '1' }, { text: '2' }]);
      const sent = request('original');
      await model.generate(sent, live());
      (sent.contents as unknown[]).push('mutated later');
      await model.generate(request('second'), live());
      const calls = model.calls;
      expect(calls).toEqual([request('original'), request('second')]);
      expect(calls[0]).not.toBe(sent);
      const entry = calls[0].contents[0] as unknown as { content: { parts: { data?: { n: number[] } }[] } };
      for (const value of [calls, calls[0], calls[0].contents, entry, entry.content.parts, entry.content.parts[1].data?.n, calls[0].tools[0].parameters]) {
        expect(Object.isFrozen(value)).toBe(true);
      }
      expect(() => (calls as unknown[]).push(1)).toThrow(TypeError);
    });

    it('starts empty and is a snapshot', async () => {
      const model = new ScriptedModel([{ text: '1' }]);
      const before = model.calls;
      await model.generate(request('a'), live());
      expect(before).toEqual([]);
      expect(model.calls).toHaveLength(1);
    });

    it('refuses a request it cannot copy without naming its content', async () => {
      const model = new ScriptedModel([{ text: '1' }]);
      const odd = { contents: [], tools: [], instruction: (() => 'secret-instruction') as unknown as string };
      const error = (await rejection(model.generate(odd, live()))) as RunnerError;
      expect(error).toMatchObject({ code: 'model_failed', details: { reason: 'invalid_response' } });
      expect(error.message).not.toContain('secret');
    });
  });

  describe('cancellation', () => {
    it('rejects with the reason of an already aborted signal, using no step and recording nothing', async () => {
      const model = new ScriptedModel([{ text: 'kept' }]);
      const controller = new AbortController();
      const reason = new Error('cancelled by caller');
      controller.abort(reason);
      expect(await rejection(model.generate(request('a'), controller.signal))).toBe(reason);
      expect(model.calls).toEqual([]);
      expect(await model.generate(request('b'), live())).toEqual({ text: 'kept' });
    });

    it('rejects with the reason as soon as the signal aborts, even when the step ignores it', async () => {
      const model = new ScriptedModel([() => new Promise(() => undefined)]);
      const controller = new AbortController();
      const pending = model.generate(request('a'), controller.signal);
      const reason = { cancelled: 'consumer_closed' };
      controller.abort(reason);
      expect(await rejection(pending)).toBe(reason);
    });

    it('lets a step wait on the signal to model a slow call', async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const model = new ScriptedModel([
        (_request, signal) =>
          new Promise((_resolve, reject) => {
            started();
            signal.addEventListener('abort', () => reject(new Error('step saw the abort')));
          }),
      ]);
      const controller = new AbortController();
      const pending = model.generate(request('a'), controller.signal);
      await running;
      controller.abort('stop');
      expect(await rejection(pending)).toBe('stop');
      expect(model.calls).toHaveLength(1);
    });

    it('leaves no abort listener behind once a step has settled', async () => {
      const controller = new AbortController();
      const model = new ScriptedModel([async () => ({ text: 'ok' }), () => Promise.reject(new Error('step failed'))]);
      await model.generate(request('a'), controller.signal);
      await rejection(model.generate(request('b'), controller.signal));
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });
  });
});
