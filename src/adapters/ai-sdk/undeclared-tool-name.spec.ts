import { randomBytes } from 'node:crypto';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { RuntimePolicy } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { guardTools } from './guard-tools';
import { CapturingSink, scriptedModel, textTurn, toolTurn } from './testing/ai-sdk-fixtures';

const anyInput = jsonSchema<Record<string, unknown>>({ type: 'object' });

describe('guardTools and a tool name the model made up (issue 22, item 6)', () => {
  it('checks only the names of the guarded set: a made-up name reaches no decision and no audit record', async () => {
    const secret = `canary-${randomBytes(12).toString('hex')}`;
    const policy = RuntimePolicy.compile({ agents: { allow: 'all' }, tools: { deny: ['shell'] } });
    const decisions: PolicyDecision[] = [];
    const sink = new CapturingSink();
    const executed: string[] = [];
    const tools = guardTools(
      { shell: tool({ inputSchema: anyInput, execute: async () => void executed.push('shell') }) },
      { policy, auditSink: sink, onDecision: (decision) => decisions.push(decision) },
    );

    const result = await generateText({
      model: scriptedModel(toolTurn({ id: 'c1', name: `user ssn ${secret}`, input: {} }, { id: 'c2', name: 'shell', input: {} }), textTurn('done')),
      tools,
      prompt: 'go',
      stopWhen: stepCountIs(2),
    });

    // the SDK answers the made-up name itself (no such tool) before any hook of the set runs
    expect(result.steps[0].content.filter((part) => part.type === 'tool-error').map((part) => part.toolCallId).sort()).toEqual(['c1', 'c2']);
    expect(executed).toEqual([]);
    expect(decisions.map((decision) => [decision.subject, decision.reason])).toEqual([['shell', 'explicitly_denied']]);
    expect(sink.decisions).toEqual(decisions);
    expect(JSON.stringify({ decisions, audit: sink.decisions })).not.toContain(secret);
  });
});
