import { isPlainObject } from '../../shared/options/plain-object';

/**
 * The input the agent check measures: the text parts of the prompt's user messages, joined by `\n`
 * (measured as UTF-8 bytes). System, assistant and tool messages are not user input (tool results
 * pass the tool-result budget in `guardTools`); file parts are not measured. A prompt that cannot be
 * read this way gives `undefined`, which the policy denies as `invalid_content`.
 */
export function userTextOf(prompt: unknown): string | undefined {
  if (!Array.isArray(prompt)) return undefined;
  const texts: string[] = [];
  for (const message of prompt as unknown[]) {
    if (!isPlainObject(message)) return undefined;
    if (message.role !== 'user') continue;
    if (!Array.isArray(message.content)) return undefined;
    for (const part of message.content as unknown[]) {
      if (isPlainObject(part) && part.type === 'text') {
        if (typeof part.text !== 'string') return undefined;
        texts.push(part.text);
      }
    }
  }
  return texts.join('\n');
}

/**
 * The output the final-output check measures: the text parts of one model response, concatenated
 * (as the stream's text deltas are). Reasoning, files and tool calls are not part of it (tool calls
 * pass `checkTool` in `guardTools`). Unreadable content gives `undefined`, denied as `invalid_content`.
 */
export function responseTextOf(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const part of content as unknown[]) {
    if (!isPlainObject(part)) return undefined;
    if (part.type !== 'text') continue;
    if (typeof part.text !== 'string') return undefined;
    text += part.text;
  }
  return text;
}
