import { JsonError } from '../../json';
import type { ModelRequest } from './model.types';
import { fromChatResponseBody, toChatRequestBody } from './openai-chat-mapping';

const SETTINGS = { model: 'm-1' };

describe('OpenAI chat mapping (spec 03 §3)', () => {
  describe('request body', () => {
    it('maps instruction, user, model and tool entries, and declarations, in history order', () => {
      const request: ModelRequest = {
        instruction: 'You are terse.',
        contents: [
          { role: 'user', content: { role: 'user', parts: [{ text: 'find' }, { data: { z: 1, a: [true, null] } }, { text: 'please' }] } },
          { role: 'model', text: 'looking', toolCalls: [{ id: 'call-1', name: 'lookup', args: { q: 'x', a: 1 } }, { id: 'call-2', name: 'noop', args: {} }] },
          { role: 'tool', callId: 'call-1', name: 'lookup', response: { success: true, result: { b: 2, a: 1 } } },
          { role: 'tool', callId: 'call-2', name: 'noop', response: { success: false, error: { kind: 'tool_error' } } },
          { role: 'model', text: 'found it' },
        ],
        tools: [
          { name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
          { name: 'noop', parameters: { type: 'object' } },
        ],
      };
      expect(toChatRequestBody(request, SETTINGS)).toEqual({
        model: 'm-1',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'find\n{"a":[true,null],"z":1}\nplease' },
          {
            role: 'assistant',
            content: 'looking',
            tool_calls: [
              { id: 'call-1', type: 'function', function: { name: 'lookup', arguments: '{"a":1,"q":"x"}' } },
              { id: 'call-2', type: 'function', function: { name: 'noop', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call-1', content: '{"result":{"a":1,"b":2},"success":true}' },
          { role: 'tool', tool_call_id: 'call-2', content: '{"error":{"kind":"tool_error"},"success":false}' },
          { role: 'assistant', content: 'found it' },
        ],
        tools: [
          { type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
          { type: 'function', function: { name: 'noop', parameters: { type: 'object' } } },
        ],
      });
    });

    it('leaves out system without an instruction and tools without declarations', () => {
      const body = toChatRequestBody({ contents: [{ role: 'user', content: { role: 'user', parts: [{ text: 'hi' }] } }], tools: [] }, SETTINGS);
      expect(body).toEqual({ model: 'm-1', messages: [{ role: 'user', content: 'hi' }] });
      expect('tools' in body).toBe(false);
      expect(toChatRequestBody({ instruction: '', contents: [], tools: [] }, SETTINGS).messages).toEqual([]);
    });

    it('sends a tool turn without text as content null, and a turn with neither as empty text', () => {
      const body = toChatRequestBody(
        { contents: [{ role: 'model', toolCalls: [{ id: 'c', name: 't', args: 'not json' }] }, { role: 'model', toolCalls: [] }], tools: [] },
        SETTINGS,
      );
      expect(body.messages).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '"not json"' } }] },
        { role: 'assistant', content: '' },
      ]);
    });

    it('passes temperature and maxTokens (as max_tokens) through when set', () => {
      const body = toChatRequestBody({ contents: [], tools: [] }, { model: 'm', temperature: 0, maxTokens: 64 });
      expect(body).toEqual({ model: 'm', messages: [], temperature: 0, max_tokens: 64 });
    });

    it('throws JsonError for a value JSON cannot hold', () => {
      const request = { contents: [{ role: 'tool', callId: 'c', name: 't', response: { when: new Date(0) } }], tools: [] } as unknown as ModelRequest;
      expect(() => toChatRequestBody(request, SETTINGS)).toThrow(JsonError);
    });
  });

  describe('response body', () => {
    it('maps text and usage', () => {
      expect(
        fromChatResponseBody({ id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }),
      ).toEqual({ text: 'Hello', usage: { inputTokens: 12, outputTokens: 3 } });
    });

    it('maps tool calls with parsed args; unparseable args stay the text the model sent', () => {
      const response = fromChatResponseBody({
        choices: [
          {
            message: {
              content: null,
              tool_calls: [
                { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"x","n":[1,2]}' } },
                { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"q":' } },
                { type: 'function', function: { name: 'noop', arguments: '[1]' } },
                { id: null, function: { name: 'raw', arguments: { already: 'parsed' } } },
              ],
            },
          },
        ],
      });
      expect(response).toEqual({
        toolCalls: [
          { id: 'call_a', name: 'lookup', args: { q: 'x', n: [1, 2] } },
          { id: 'call_b', name: 'lookup', args: '{"q":' },
          { name: 'noop', args: [1] },
          { name: 'raw', args: { already: 'parsed' } },
        ],
      });
      expect(response && 'text' in response).toBe(false);
    });

    it('treats an empty tool_calls list as a final answer', () => {
      expect(fromChatResponseBody({ choices: [{ message: { content: 'done', tool_calls: [] } }] })).toEqual({ text: 'done' });
    });

    it('leaves out usage that is missing or malformed', () => {
      expect(fromChatResponseBody({ choices: [{ message: { content: 'a' } }], usage: { prompt_tokens: -1, completion_tokens: 2 } })).toEqual({ text: 'a' });
      expect(fromChatResponseBody({ choices: [{ message: { content: 'a' } }], usage: 'lots' })).toEqual({ text: 'a' });
    });

    it.each<[string, unknown]>([
      ['not an object', 'hello'],
      ['an array', [{ choices: [] }]],
      ['no choices', {}],
      ['an empty choices list', { choices: [] }],
      ['a choice without a message', { choices: [{ text: 'legacy completion' }] }],
      ['non-string content', { choices: [{ message: { content: 42 } }] }],
      ['tool_calls that are not a list', { choices: [{ message: { tool_calls: {} } }] }],
      ['a tool call without a function', { choices: [{ message: { tool_calls: [{ id: 'a' }] } }] }],
      ['a tool call of another type', { choices: [{ message: { tool_calls: [{ type: 'code', function: { name: 'x', arguments: '{}' } }] } }] }],
      ['a tool call without a name', { choices: [{ message: { tool_calls: [{ function: { arguments: '{}' } }] } }] }],
      ['a tool call without arguments', { choices: [{ message: { tool_calls: [{ function: { name: 'x' } }] } }] }],
      ['a tool call with a numeric id', { choices: [{ message: { tool_calls: [{ id: 7, function: { name: 'x', arguments: '{}' } }] } }] }],
    ])('refuses %s (null)', (_name, body) => {
      expect(fromChatResponseBody(body)).toBeNull();
    });
  });
});
