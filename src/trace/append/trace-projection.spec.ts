import { inspect } from 'node:util';
import fc from 'fast-check';
import { projectTraceEvent, type TraceProjectionSettings } from './trace-projection';
import { TraceStoreError } from '../trace-store.errors';
import type { TraceRecordKind } from '../trace.types';
import { thrown } from '../../shared/testing/thrown';

const REJECT: TraceProjectionSettings = { contentPolicy: 'reject', maxEventBytes: 262_144 };
const PRUNE: TraceProjectionSettings = { contentPolicy: 'prune', maxEventBytes: 262_144 };

const observe = (input: unknown, settings = REJECT) => projectTraceEvent('observability', input, settings);
const lifecycle = (input: unknown, settings = REJECT) => projectTraceEvent('workflow_lifecycle', input, settings);
const failure = (kind: TraceRecordKind, input: unknown, settings = REJECT) => thrown(() => projectTraceEvent(kind, input, settings), TraceStoreError);
const invalid = (field: string) => ({ code: 'invalid_trace_event', details: { field } });
const invalidLifecycle = (field: string) => ({ code: 'invalid_trace_lifecycle_event', details: { field } });
const CONTENT_REJECTED = { code: 'trace_content_rejected' };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
/** `base` with `patch` merged in, objects merged recursively. */
function merge(base: Json, patch: Json): Json {
  const merged: Json = { ...base };
  for (const [key, value] of Object.entries(patch)) merged[key] = isObject(value) && isObject(merged[key]) ? merge(merged[key] as Json, value) : value;
  return merged;
}
/** A deep copy made in this realm (`structuredClone` under Jest builds objects of another realm, which are not plain). */
const jsonClone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
/** `value` without the member at the dotted `path` (a top-level key, or `parent.child` with a dotted child). */
function without(value: Json, parent: string, child?: string): Json {
  const copy = jsonClone(value);
  if (child === undefined) delete copy[parent];
  else delete (copy[parent] as Json)[child];
  return copy;
}

const OBSERVABILITY_BASE: Json = { event: 'runner.tool.call', timestamp_ms: 1_700_000_000_000, metadata: { trace_id: 'trace-1' } };
const SPAN_BASE: Json = { schema: 2, name: 'tool call', trace_id: 'trace-1', span_id: 'span-1', start_time_ms: 10 };
const LIFECYCLE_BASE: Json = { type: 'run_started', sequence: 1, timestamp: 1_700_000_000_000, workflow_id: 'run-1', workflow_kind: 'agent_run' };

const FULL_MEASUREMENTS = { count: 2, duration_ms: 1.5, duration: 1500, system_time: -3, monotonic_time: 12.25, bytes: 100, frames: 0 };
const FULL_METADATA = {
  run_id: 'run-1',
  invocation_id: 'inv-1',
  session: 'session-1',
  agent: 'helper',
  model: 'gpt-4o-mini',
  tool: 'search',
  tool_digest: '0123456789abcdef',
  call_id: 'call-1',
  trace_id: 'trace-1',
  span_id: 'span-1',
  parent_id: 'span-0',
  tracestate: 'vendor=value',
  trace_flags: 1,
};
const FULL_ATTRIBUTES = {
  phase: 'start',
  hook: 'before_tool',
  outcome: 'ok',
  status: 200,
  stream: true,
  capture_error: false,
  'error.type': 'timeout',
  'gen_ai.system': 'openai',
  'gen_ai.operation.name': 'chat',
  'gen_ai.request.model': 'gpt-4o',
  'gen_ai.response.model': 'gpt-4o-2024',
  'gen_ai.response.id': 'resp-1',
  'gen_ai.response.finish_reasons': ['stop', 'tool_calls'],
  'gen_ai.usage.input_tokens': 12,
  'gen_ai.usage.output_tokens': 0,
  'gen_ai.tool.name': 'search',
  'gen_ai.tool.call.id': 'call-1',
  'gen_ai.agent.name': 'helper',
};
const FULL_OBSERVABILITY = { schema: 1, event: 'runner.tool.call', timestamp_ms: 0, measurements: FULL_MEASUREMENTS, metadata: FULL_METADATA, attributes: FULL_ATTRIBUTES, content_captured: false };
const FULL_SPAN = {
  schema: 2,
  name: 'chat gpt-4o',
  trace_id: 'trace-1',
  span_id: 'span-1',
  parent_id: 'span-0',
  tracestate: 'vendor=value',
  run_id: 'run-1',
  invocation_id: 'inv-1',
  trace_flags: 255,
  kind: 'client',
  start_time_ms: 0,
  end_time_ms: 20.5,
  duration_ms: 20.5,
  status: 'ok',
  attributes: FULL_ATTRIBUTES,
  content_captured: false,
};
const FULL_LIFECYCLE = {
  type: 'node_finished',
  sequence: 3,
  timestamp: 0,
  workflow_id: 'wf-1',
  workflow_kind: 'graph',
  invocation_id: 'inv-1',
  run_id: 'run-1',
  node_id: 'n1',
  node_type: 'tool',
  outcome: 'ok',
  pause_kind: '',
  parent: 'root',
  join_id: 'j1',
  from: 'a',
  to: 'b',
  fork_id: 'f1',
  iteration: 0,
  branch_count: 2,
  completed_count: 1,
  attempt: 4,
};

describe('projectTraceEvent (spec 06 §4 steps 2–5)', () => {
  describe('observability schema 1', () => {
    it('keeps every allowed key with a valid value, in table order', () => {
      const projected = observe(FULL_OBSERVABILITY);
      expect(projected.event).toEqual(FULL_OBSERVABILITY);
      expect(Object.keys(projected.event)).toEqual(['schema', 'event', 'timestamp_ms', 'measurements', 'metadata', 'attributes', 'content_captured']);
      expect(projected.contentPruned).toBe(false);
    });

    it('takes an event without `schema` as schema 1 and stores content_captured: false even when absent', () => {
      expect(observe(OBSERVABILITY_BASE).event).toEqual({ ...OBSERVABILITY_BASE, content_captured: false });
    });

    it.each([3, 0, '1', '2', null, true, 1.5])('refuses schema %p with invalid_trace_event {field: schema}', (schema) => {
      expect(failure('observability', { ...OBSERVABILITY_BASE, schema })).toMatchObject(invalid('schema'));
    });

    it('accepts event names of [A-Za-z0-9_.-] with 1..128 bytes and timestamp_ms integers ≥ 0', () => {
      for (const event of ['a', 'A-z_0.9', 'x'.repeat(128)]) expect(observe({ ...OBSERVABILITY_BASE, event }).event.event).toBe(event);
      for (const timestamp_ms of [0, Number.MAX_SAFE_INTEGER]) expect(observe({ ...OBSERVABILITY_BASE, timestamp_ms }).event.timestamp_ms).toBe(timestamp_ms);
    });

    it.each([
      ['event', undefined],
      ['event', ''],
      ['event', 'x'.repeat(129)],
      ['event', 'has space'],
      ['event', 'ümlaut'],
      ['event', 'a/b'],
      ['event', 7],
      ['timestamp_ms', undefined],
      ['timestamp_ms', -1],
      ['timestamp_ms', 1.5],
      ['timestamp_ms', '1'],
      ['timestamp_ms', 2 ** 53],
    ])('a missing or invalid required %s (%p) is invalid_trace_event with its field, also when pruning', (field, value) => {
      const input = value === undefined ? without(OBSERVABILITY_BASE, field) : { ...OBSERVABILITY_BASE, [field]: value };
      expect(failure('observability', input)).toMatchObject(invalid(field));
      expect(failure('observability', input, PRUNE)).toMatchObject(invalid(field));
    });

    it('refuses an input that is not an object with {field: input}', () => {
      for (const input of [null, 'event', 1, [], [OBSERVABILITY_BASE]]) expect(failure('observability', input)).toMatchObject(invalid('input'));
    });

    it('reports a missing required field before content to reject', () => {
      expect(failure('observability', { payload: 'x', timestamp_ms: 1 })).toMatchObject(invalid('event'));
    });
  });

  /** Each case is dropped as a whole; pruning must leave exactly the base event. */
  const observabilityDrops: Array<[string, Json]> = [
    ['an unknown top-level key `payload`', { payload: 'the prompt' }],
    ['an alias `PromptText`', { PromptText: 'the prompt' }],
    ['an alias `request-body`', { 'request-body': { messages: [] } }],
    ['an alias `responseBody`', { responseBody: 'answer' }],
    ['an alias `input`', { input: 'the prompt' }],
    ['an alias `completion`', { completion: 'answer' }],
    ['a differently cased `Event`', { Event: 'runner.tool.call' }],
    ['a differently cased `Metadata`', { Metadata: { run_id: 'r' } }],
    ['`content_captured: true`', { content_captured: true }],
    ['a string `content_captured`', { content_captured: 'false' }],
    ['a numeric `content_captured`', { content_captured: 0 }],
    ['measurements given as an array', { measurements: [1, 2] }],
    ['measurements given as a string', { measurements: 'count=1' }],
    ['an unknown measurement', { measurements: { tokens: 3 } }],
    ['a string measurement', { measurements: { count: '1' } }],
    ['a null measurement', { measurements: { duration_ms: null } }],
    ['an object under metadata.session', { metadata: { session: { id: 's', history: ['hi'] } } }],
    ['an array under metadata.agent', { metadata: { agent: ['helper'] } }],
    ['a 513-byte metadata.model', { metadata: { model: 'm'.repeat(513) } }],
    ['a multi-byte metadata.tool over 512 bytes', { metadata: { tool: '€'.repeat(171) } }],
    ['an empty metadata.run_id (identity members are 1..512 bytes)', { metadata: { run_id: '' } }],
    ['a 513-byte metadata.invocation_id', { metadata: { invocation_id: 'i'.repeat(513) } }],
    ['metadata.trace_flags 256', { metadata: { trace_flags: 256 } }],
    ['metadata.trace_flags -1', { metadata: { trace_flags: -1 } }],
    ['metadata.trace_flags 1.5', { metadata: { trace_flags: 1.5 } }],
    ['a string metadata.trace_flags', { metadata: { trace_flags: '1' } }],
    ['content nested under metadata', { metadata: { prompt: 'the prompt' } }],
    ['a nested `payLoad` in metadata', { metadata: { payLoad: { text: 'x' } } }],
    ['a workflow_id under metadata (not in schema 1)', { metadata: { workflow_id: 'w' } }],
    ['attributes given as an array', { attributes: [['phase', 'start']] }],
    ['an unknown attribute', { attributes: { 'gen_ai.prompt': 'the prompt' } }],
    ['a nested `payLoad` in attributes', { attributes: { payLoad: 'x' } }],
    ['an object attribute value', { attributes: { phase: { nested: true } } }],
    ['a null attribute value', { attributes: { outcome: null } }],
    ['a 513-byte attribute string', { attributes: { hook: 'h'.repeat(513) } }],
    ['17 finish reasons', { attributes: { 'gen_ai.response.finish_reasons': new Array(17).fill('stop') } }],
    ['a 65-byte finish reason', { attributes: { 'gen_ai.response.finish_reasons': ['s'.repeat(65)] } }],
    ['a numeric finish reason', { attributes: { 'gen_ai.response.finish_reasons': [1] } }],
    ['finish reasons given as a string', { attributes: { 'gen_ai.response.finish_reasons': 'stop' } }],
    ['negative input tokens', { attributes: { 'gen_ai.usage.input_tokens': -1 } }],
    ['fractional output tokens', { attributes: { 'gen_ai.usage.output_tokens': 1.5 } }],
    ['string input tokens', { attributes: { 'gen_ai.usage.input_tokens': '3' } }],
  ];

  describe('observability content (step 3)', () => {
    it.each(observabilityDrops)('rejects %s with trace_content_rejected by default', (_name, patch) => {
      const error = failure('observability', merge(OBSERVABILITY_BASE, patch));
      expect(error).toMatchObject(CONTENT_REJECTED);
      expect(error.details).toBeUndefined();
    });

    it.each(observabilityDrops)('prunes %s exactly and marks contentPruned', (_name, patch) => {
      const projected = observe(merge(OBSERVABILITY_BASE, patch), PRUNE);
      expect(projected.contentPruned).toBe(true);
      expect(projected.event).toEqual(withEmptyContainers(observe(OBSERVABILITY_BASE).event, patch, ['measurements', 'metadata', 'attributes']));
    });

    it('rejects metadata given as an array; pruning drops it whole, which leaves a schema 1 event without identity', () => {
      const input = { ...OBSERVABILITY_BASE, metadata: [FULL_METADATA] };
      expect(failure('observability', input)).toMatchObject(CONTENT_REJECTED);
      expect(failure('observability', input, PRUNE)).toMatchObject({ code: 'trace_identity_required' });
      const withSpanIdentity = observe({ ...SPAN_BASE, metadata: [FULL_METADATA] }, PRUNE);
      expect(withSpanIdentity.event).not.toHaveProperty('metadata');
    });

    it('prunes content_captured: true to a stored false', () => {
      expect(observe({ ...OBSERVABILITY_BASE, content_captured: true }, PRUNE).event.content_captured).toBe(false);
    });

    it('prunes bad parts at every level at once and keeps every good part', () => {
      const input = {
        ...FULL_OBSERVABILITY,
        payload: 'x',
        measurements: { ...FULL_MEASUREMENTS, tokens: 1 },
        metadata: { ...FULL_METADATA, session: { id: 1 }, prompt: 'p' },
        attributes: { ...FULL_ATTRIBUTES, 'gen_ai.usage.input_tokens': -5, PromptText: 'p' },
        content_captured: true,
      };
      const projected = observe(input, PRUNE);
      expect(projected.contentPruned).toBe(true);
      expect(projected.event).toEqual({
        ...FULL_OBSERVABILITY,
        metadata: without(FULL_METADATA, 'session'),
        attributes: without(FULL_ATTRIBUTES, 'gen_ai.usage.input_tokens'),
      });
    });

    it('accepts a clean event with contentPruned false under either policy', () => {
      expect(observe(FULL_OBSERVABILITY, PRUNE).contentPruned).toBe(false);
      expect(observe(FULL_OBSERVABILITY, REJECT).contentPruned).toBe(false);
    });

    it('accepts the edges of the rules: empty metadata strings, 512-byte strings, 16 reasons of 64 bytes, any finite measurement', () => {
      const edges = merge(OBSERVABILITY_BASE, {
        measurements: { count: -1e308, bytes: 0 },
        metadata: { session: '', agent: 'a'.repeat(512), tool: '€'.repeat(170), trace_flags: 0 },
        attributes: { phase: 'p'.repeat(512), outcome: -2.5, 'gen_ai.response.finish_reasons': new Array(16).fill('r'.repeat(64)), 'gen_ai.usage.input_tokens': 0 },
      });
      expect(observe(edges).event).toEqual({ ...edges, content_captured: false });
    });
  });

  describe('span schema 2', () => {
    it('keeps every allowed key with a valid value, in table order', () => {
      const projected = observe(FULL_SPAN);
      expect(projected.event).toEqual(FULL_SPAN);
      expect(Object.keys(projected.event)).toEqual(Object.keys(FULL_SPAN));
      expect(projected.identity).toEqual({ run_id: 'run-1', trace_id: 'trace-1', invocation_id: 'inv-1' });
    });

    it('stores content_captured: false even when absent', () => {
      expect(observe(SPAN_BASE).event).toEqual({ ...SPAN_BASE, content_captured: false });
    });

    it.each([
      ['name', undefined],
      ['name', ''],
      ['name', '€'.repeat(43)],
      ['name', 1],
      ['trace_id', undefined],
      ['trace_id', ''],
      ['trace_id', 't'.repeat(513)],
      ['span_id', undefined],
      ['span_id', ''],
      ['span_id', 7],
      ['start_time_ms', undefined],
      ['start_time_ms', -1],
      ['start_time_ms', '10'],
    ])('a missing or invalid required %s (%p) is invalid_trace_event with its field', (field, value) => {
      const input = value === undefined ? without(SPAN_BASE, field) : { ...SPAN_BASE, [field]: value };
      expect(failure('observability', input)).toMatchObject(invalid(field));
      expect(failure('observability', input, PRUNE)).toMatchObject(invalid(field));
    });

    it('accepts a 128-byte name and fractional times', () => {
      expect(observe({ ...SPAN_BASE, name: `${'€'.repeat(42)}ab`, start_time_ms: 0.5 }).event.name).toBe(`${'€'.repeat(42)}ab`);
    });

    const spanDrops: Array<[string, Json]> = [
      ['an empty parent_id', { parent_id: '' }],
      ['a 513-byte tracestate', { tracestate: 's'.repeat(513) }],
      ['an empty run_id', { run_id: '' }],
      ['a numeric invocation_id', { invocation_id: 5 }],
      ['trace_flags 256', { trace_flags: 256 }],
      ['a kind in other casing', { kind: 'Server' }],
      ['an unknown kind', { kind: 'batch' }],
      ['a status in other casing', { status: 'OK' }],
      ['a negative end_time_ms', { end_time_ms: -1 }],
      ['a string duration_ms', { duration_ms: '5' }],
      ['metadata (not in span schema)', { metadata: { run_id: 'r' } }],
      ['measurements (not in span schema)', { measurements: { count: 1 } }],
      ['`event` (not in span schema)', { event: 'x' }],
      ['attributes given as an array', { attributes: ['phase'] }],
      ['an unknown attribute', { attributes: { 'gen_ai.completion': 'answer' } }],
      ['content_captured: true', { content_captured: true }],
      ['an alias `responseBody`', { responseBody: 'answer' }],
    ];

    it.each(spanDrops)('rejects %s, or prunes exactly it', (_name, patch) => {
      const input = merge(SPAN_BASE, patch);
      expect(failure('observability', input)).toMatchObject(CONTENT_REJECTED);
      const projected = observe(input, PRUNE);
      expect(projected.contentPruned).toBe(true);
      expect(projected.event).toEqual(withEmptyContainers(observe(SPAN_BASE).event, patch, ['attributes']));
    });

    it('takes identity from the top level only', () => {
      const projected = observe({ ...SPAN_BASE, metadata: { run_id: 'meta-run' } }, PRUNE);
      expect(projected.identity).toEqual({ trace_id: 'trace-1' });
    });
  });

  describe('lifecycle schema 1', () => {
    it('keeps every allowed key with a valid value, in table order', () => {
      const projected = lifecycle(FULL_LIFECYCLE);
      expect(projected.event).toEqual(FULL_LIFECYCLE);
      expect(Object.keys(projected.event)).toEqual(Object.keys(FULL_LIFECYCLE));
      expect(projected.identity).toEqual({ run_id: 'run-1', workflow_id: 'wf-1', invocation_id: 'inv-1' });
      expect(projected.event).not.toHaveProperty('content_captured');
    });

    it.each([
      ['type', undefined],
      ['type', ''],
      ['type', 't'.repeat(129)],
      ['sequence', undefined],
      ['sequence', 0],
      ['sequence', 1.5],
      ['sequence', '1'],
      ['timestamp', undefined],
      ['timestamp', -1],
      ['timestamp', 0.5],
      ['workflow_id', undefined],
      ['workflow_id', ''],
      ['workflow_id', 'w'.repeat(513)],
      ['workflow_kind', undefined],
      ['workflow_kind', ''],
      ['workflow_kind', 3],
      ['invocation_id', undefined],
      ['invocation_id', ''],
    ])('a missing or invalid required %s (%p) is invalid_trace_lifecycle_event with its field', (field, value) => {
      const input = value === undefined ? without(FULL_LIFECYCLE, field) : { ...FULL_LIFECYCLE, [field]: value };
      expect(failure('workflow_lifecycle', input)).toMatchObject(invalidLifecycle(field));
      expect(failure('workflow_lifecycle', input, PRUNE)).toMatchObject(invalidLifecycle(field));
    });

    it('lets an agent_run event of a run not yet admitted omit invocation_id', () => {
      const projected = lifecycle({ ...LIFECYCLE_BASE, run_id: 'run-1' });
      expect(projected.event).toEqual({ ...LIFECYCLE_BASE, run_id: 'run-1' });
      expect(projected.identity).toEqual({ run_id: 'run-1', workflow_id: 'run-1' });
      expect(lifecycle({ ...LIFECYCLE_BASE, invocation_id: 'inv-1' }).identity).toEqual({ workflow_id: 'run-1', invocation_id: 'inv-1' });
    });

    it('requires invocation_id for every other workflow kind, even one cased like agent_run', () => {
      expect(failure('workflow_lifecycle', { ...LIFECYCLE_BASE, workflow_kind: 'Agent_Run' })).toMatchObject(invalidLifecycle('invocation_id'));
    });

    it('refuses an input that is not an object with {field: input}', () => {
      for (const input of [null, 'run_started', 3, [LIFECYCLE_BASE]]) expect(failure('workflow_lifecycle', input)).toMatchObject(invalidLifecycle('input'));
    });

    const lifecycleDrops: Array<[string, Json]> = [
      ['an empty run_id', { run_id: '' }],
      ['a 513-byte node_id', { node_id: 'n'.repeat(513) }],
      ['a numeric outcome', { outcome: 1 }],
      ['an object under parent', { parent: { id: 'p' } }],
      ['a negative iteration', { iteration: -1 }],
      ['a fractional attempt', { attempt: 1.5 }],
      ['a string branch_count', { branch_count: '2' }],
      ['a badly typed agent_run invocation_id', { invocation_id: 7 }],
      ['content_captured (not in the lifecycle schema)', { content_captured: false }],
      ['schema (not in the lifecycle schema)', { schema: 1 }],
      ['an alias `payload`', { payload: { text: 'x' } }],
      ['metadata (not in the lifecycle schema)', { metadata: { run_id: 'r' } }],
      ['a differently cased `Type`', { Type: 'x' }],
    ];

    it.each(lifecycleDrops)('rejects %s, or prunes exactly it', (_name, patch) => {
      const input = merge(LIFECYCLE_BASE, patch);
      expect(failure('workflow_lifecycle', input)).toMatchObject(CONTENT_REJECTED);
      const projected = lifecycle(input, PRUNE);
      expect(projected.contentPruned).toBe(true);
      expect(projected.event).toEqual(LIFECYCLE_BASE);
    });

    it('accepts empty and 512-byte optional strings and zero counters', () => {
      const edges = { ...LIFECYCLE_BASE, node_id: '', fork_id: 'f'.repeat(512), iteration: 0, completed_count: 0 };
      expect(lifecycle(edges).event).toEqual(edges);
    });
  });

  describe('identity (step 5)', () => {
    it('reads schema 1 identity from metadata, in the order run_id, trace_id, workflow_id, invocation_id', () => {
      const projected = observe({ ...OBSERVABILITY_BASE, metadata: { invocation_id: 'inv-1', trace_id: 'trace-1', run_id: 'run-1' } });
      expect(projected.identity).toEqual({ run_id: 'run-1', trace_id: 'trace-1', invocation_id: 'inv-1' });
      expect(Object.keys(projected.identity)).toEqual(['run_id', 'trace_id', 'invocation_id']);
    });

    it('does not take schema 1 identity from the top level', () => {
      const input = { event: 'e', timestamp_ms: 1, run_id: 'run-1', metadata: { session: 's' } };
      expect(failure('observability', input)).toMatchObject(CONTENT_REJECTED);
      expect(failure('observability', input, PRUNE)).toMatchObject({ code: 'trace_identity_required' });
    });

    it('requires at least one identity member', () => {
      const error = failure('observability', { event: 'e', timestamp_ms: 1 });
      expect(error).toMatchObject({ code: 'trace_identity_required' });
      expect(error.details).toBeUndefined();
      expect(failure('observability', { event: 'e', timestamp_ms: 1, metadata: { session: 's', span_id: 'x' } })).toMatchObject({ code: 'trace_identity_required' });
    });

    it('takes a 512-byte member, and leaves a pruned one out of identity', () => {
      const long = 'r'.repeat(512);
      expect(observe({ ...OBSERVABILITY_BASE, metadata: { run_id: long } }).identity).toEqual({ run_id: long });
      expect(observe({ ...OBSERVABILITY_BASE, metadata: { trace_id: 'trace-1', run_id: `${long}x` } }, PRUNE).identity).toEqual({ trace_id: 'trace-1' });
    });

    it('returns a frozen identity', () => {
      const projected = observe(OBSERVABILITY_BASE);
      expect(Object.isFrozen(projected.identity)).toBe(true);
      expect(Object.isFrozen(projected)).toBe(true);
    });
  });

  describe('redaction (step 4)', () => {
    const BEARER = 'Bearer abcdefgh12345678';
    const SK = 'sk-abcdefghijklmnopqrstuvwx';
    const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';

    it('redacts secrets in every non-identity string, nested ones included, without pruning', () => {
      const projected = observe(
        merge(OBSERVABILITY_BASE, {
          event: SK,
          metadata: { session: `s ${BEARER}`, tracestate: 'password=hunter2' },
          attributes: { outcome: `failed with ${JWT}`, 'gen_ai.response.finish_reasons': ['stop', 'token=abc'] },
        }),
      );
      expect(projected.contentPruned).toBe(false);
      expect(projected.event).toMatchObject({
        event: '[redacted]',
        metadata: { trace_id: 'trace-1', session: 's [redacted]', tracestate: '[redacted]' },
        attributes: { outcome: 'failed with [redacted]', 'gen_ai.response.finish_reasons': ['stop', '[redacted]'] },
      });
    });

    it('never redacts identity members, in the event or in the identity', () => {
      const schema1 = observe({ ...OBSERVABILITY_BASE, metadata: { run_id: SK, trace_id: JWT, invocation_id: 'token=abc' } });
      expect(schema1.identity).toEqual({ run_id: SK, trace_id: JWT, invocation_id: 'token=abc' });
      expect(schema1.event.metadata).toEqual({ run_id: SK, trace_id: JWT, invocation_id: 'token=abc' });
      const span = observe({ ...SPAN_BASE, trace_id: JWT, span_id: JWT, run_id: SK });
      expect(span.event).toMatchObject({ trace_id: JWT, run_id: SK, span_id: '[redacted]' });
      const run = lifecycle({ ...FULL_LIFECYCLE, workflow_id: SK, invocation_id: SK, run_id: SK, workflow_kind: SK, outcome: BEARER });
      expect(run.identity).toEqual({ run_id: SK, workflow_id: SK, invocation_id: SK });
      expect(run.event).toMatchObject({ workflow_id: SK, invocation_id: SK, run_id: SK, workflow_kind: '[redacted]', outcome: '[redacted]' });
    });
  });

  describe('the result is a deep-frozen copy', () => {
    it('holds no reference into the input and ignores later changes to it', () => {
      const input = jsonClone(FULL_OBSERVABILITY) as typeof FULL_OBSERVABILITY;
      const projected = observe(input);
      expect(projected.event.metadata).not.toBe(input.metadata);
      expect((projected.event.attributes as Json)['gen_ai.response.finish_reasons']).not.toBe(input.attributes['gen_ai.response.finish_reasons']);
      input.metadata.session = 'changed';
      input.attributes['gen_ai.response.finish_reasons'].push('length');
      expect(projected.event).toEqual(FULL_OBSERVABILITY);
    });

    it('is frozen at every level', () => {
      const { event } = observe(FULL_OBSERVABILITY);
      const attributes = event.attributes as Json;
      for (const part of [event, event.metadata, event.measurements, attributes, attributes['gen_ai.response.finish_reasons']]) expect(Object.isFrozen(part)).toBe(true);
    });

    it('turns -0 into 0 and accepts null-prototype input objects', () => {
      const metadata = Object.assign(Object.create(null) as Json, { trace_id: 't' });
      const { event } = observe({ ...OBSERVABILITY_BASE, timestamp_ms: -0, metadata, measurements: { count: -0 } });
      expect(Object.is(event.timestamp_ms, 0)).toBe(true);
      expect(Object.is((event.measurements as Json).count, 0)).toBe(true);
      expect(event.metadata).toEqual({ trace_id: 't' });
    });
  });

  describe('the input guard runs first (step 2)', () => {
    const deep = (levels: number): unknown => {
      let value: unknown = 'leaf';
      for (let level = 0; level < levels; level++) value = { payLoad: value };
      return value;
    };

    it('refuses a 40-deep input with trace_event_input_too_large before projection, under either policy and kind', () => {
      for (const settings of [REJECT, PRUNE]) {
        expect(failure('observability', { ...OBSERVABILITY_BASE, attributes: deep(40) }, settings)).toMatchObject({ code: 'trace_event_input_too_large', details: { limit: 32 } });
        expect(failure('workflow_lifecycle', { ...LIFECYCLE_BASE, payload: deep(40) }, settings)).toMatchObject({ code: 'trace_event_input_too_large', details: { limit: 32 } });
      }
    });

    it('bounds string bytes by 4 × maxEventBytes from the settings', () => {
      const settings = { contentPolicy: 'prune', maxEventBytes: 64 } as const;
      expect(failure('observability', { ...OBSERVABILITY_BASE, payload: 'x'.repeat(256) }, settings)).toMatchObject({ code: 'trace_event_input_too_large', details: { limit: 256 } });
    });

    it('never calls a getter, even one that throws or that would supply a required field', () => {
      const calls = jest.fn();
      const withGetter = Object.defineProperty({ ...OBSERVABILITY_BASE }, 'event', { get: () => (calls(), 'runner.x'), enumerable: true });
      const throwing = Object.defineProperty({}, 'trace_id', {
        get: () => {
          throw new Error('getter ran');
        },
        enumerable: true,
      });
      expect(failure('observability', withGetter)).toMatchObject(invalid('event'));
      expect(failure('observability', { ...OBSERVABILITY_BASE, metadata: throwing }, PRUNE)).toMatchObject(invalid('metadata.trace_id'));
      expect(calls).not.toHaveBeenCalled();
    });

    it('refuses a Proxy input with invalid_trace_event, without running a trap, for either kind', () => {
      const trap = jest.fn();
      const handler = { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap, has: trap };
      expect(failure('observability', new Proxy({ ...OBSERVABILITY_BASE }, handler))).toMatchObject(invalid('input'));
      expect(failure('workflow_lifecycle', new Proxy({ ...LIFECYCLE_BASE }, handler))).toMatchObject(invalid('input'));
      expect(failure('observability', { ...OBSERVABILITY_BASE, metadata: new Proxy({ trace_id: 't' }, handler) })).toMatchObject(invalid('metadata'));
      expect(trap).not.toHaveBeenCalled();
    });

    it('never calls toJSON', () => {
      const toJSON = jest.fn(() => OBSERVABILITY_BASE);
      expect(failure('observability', { toJSON })).toMatchObject(invalid('input'));
      const hidden = Object.defineProperty({ ...OBSERVABILITY_BASE }, 'toJSON', { value: toJSON, enumerable: false });
      expect(observe(hidden).event).toEqual({ ...OBSERVABILITY_BASE, content_captured: false });
      expect(toJSON).not.toHaveBeenCalled();
    });

    it('refuses an unknown kind as a bad request', () => {
      expect(failure('spans' as TraceRecordKind, OBSERVABILITY_BASE)).toMatchObject({ code: 'invalid_trace_store_request' });
    });
  });

  describe('errors never carry event content (canary)', () => {
    const CANARY = 'CANARY_s3cr3t_value';
    const inputs: Array<[TraceRecordKind, unknown, TraceProjectionSettings?]> = [
      ['observability', { ...OBSERVABILITY_BASE, [CANARY]: CANARY }],
      ['observability', { ...OBSERVABILITY_BASE, payload: CANARY, PromptText: CANARY }],
      ['observability', merge(OBSERVABILITY_BASE, { metadata: { session: { text: CANARY } }, attributes: [CANARY] })],
      ['observability', merge(OBSERVABILITY_BASE, { attributes: { [CANARY]: CANARY, phase: `${CANARY}`.repeat(40) } })],
      ['observability', { ...OBSERVABILITY_BASE, event: `bad name ${CANARY}` }],
      ['observability', { event: 'e', timestamp_ms: 1, metadata: { session: CANARY } }, PRUNE],
      ['observability', { ...OBSERVABILITY_BASE, schema: CANARY }],
      ['observability', { ...SPAN_BASE, name: CANARY.repeat(10), responseBody: CANARY }],
      ['observability', { ...OBSERVABILITY_BASE, [CANARY]: () => CANARY }],
      ['observability', { ...OBSERVABILITY_BASE, payload: { [CANARY]: CANARY.repeat(100_000) } }],
      ['workflow_lifecycle', { ...LIFECYCLE_BASE, type: CANARY.repeat(10), outcome: { CANARY } }],
      ['workflow_lifecycle', { ...LIFECYCLE_BASE, [CANARY]: CANARY }],
      ['workflow_lifecycle', { ...LIFECYCLE_BASE, workflow_kind: 'graph', invocation_id: { CANARY } }],
    ];

    // every row has all four arguments: Jest takes a missing last one for a `done` callback
    it.each(inputs.map(([kind, input, settings], index) => [index, kind, input, settings ?? REJECT] as const))('case %i: message, details and inspection are free of it', (_index, kind, input, settings) => {
      const error = failure(kind, input, settings);
      expect(error.message).not.toContain(CANARY);
      expect(JSON.stringify(error.details ?? {})).not.toContain(CANARY);
      expect(inspect(error, { depth: 5 })).not.toContain(CANARY);
      expect(JSON.stringify(Object.entries(error))).not.toContain(CANARY);
    });
  });
});

/** The allow-lists of spec 06 §4, written out independently of the implementation's tables. */
const ALLOWED = {
  observability: ['schema', 'event', 'timestamp_ms', 'measurements', 'metadata', 'attributes', 'content_captured'],
  span: ['schema', 'name', 'trace_id', 'span_id', 'parent_id', 'tracestate', 'run_id', 'invocation_id', 'trace_flags', 'kind', 'start_time_ms', 'end_time_ms', 'duration_ms', 'status', 'attributes', 'content_captured'],
  lifecycle: Object.keys(FULL_LIFECYCLE),
  measurements: Object.keys(FULL_MEASUREMENTS),
  metadata: Object.keys(FULL_METADATA),
  attributes: Object.keys(FULL_ATTRIBUTES),
} as const;

describe('projectTraceEvent properties', () => {
  const keys = [...new Set([...Object.values(ALLOWED).flat(), 'payload', 'PromptText', 'input', 'Metadata', 'payLoad', '__proto__', 'constructor', 'toString', 'workflow_id'])];
  const key = fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 }));
  const leaf = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('', 'run-1', 'stop', 'agent_run', 'client', 'ok', 'Bearer abcdefgh12345678', 'x'.repeat(513)),
    fc.integer({ min: -3, max: 300 }),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 5 })),
  }));
  const bases: Json[] = [OBSERVABILITY_BASE, SPAN_BASE, LIFECYCLE_BASE, FULL_OBSERVABILITY, FULL_SPAN, FULL_LIFECYCLE, {}];
  const nearlyValid = fc
    .tuple(fc.constantFrom(...bases), fc.dictionary(key, value, { maxKeys: 3 }), fc.dictionary(key, value, { maxKeys: 3 }), fc.constantFrom('metadata', 'attributes', 'measurements'))
    .map(([base, top, inner, at]) => ({ ...base, ...top, [at]: { ...(isObject(base[at]) ? base[at] : {}), ...inner } }));
  const exotic = fc.anything({
    maxDepth: 3,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withSparseArray: true,
    withTypedArray: true,
    withObjectString: true,
  });
  const input = fc.oneof(nearlyValid, value, exotic);
  const kind = fc.constantFrom<TraceRecordKind>('observability', 'workflow_lifecycle');
  const settings = fc.constantFrom<TraceProjectionSettings>(REJECT, PRUNE, { contentPolicy: 'prune', maxEventBytes: 64 });

  function assertWithinAllowLists(recordKind: TraceRecordKind, event: Json): void {
    const top = recordKind === 'workflow_lifecycle' ? ALLOWED.lifecycle : event.schema === 2 ? ALLOWED.span : ALLOWED.observability;
    for (const [name, member] of Object.entries(event)) {
      expect(top).toContain(name);
      if (name === 'measurements' || name === 'metadata' || name === 'attributes') {
        expect(isObject(member)).toBe(true);
        for (const inner of Object.keys(member as Json)) expect(ALLOWED[name]).toContain(inner);
      }
    }
    if (recordKind === 'observability') expect(event.content_captured).toBe(false);
  }

  it('throws nothing but TraceStoreError and never returns a key outside the allow-lists', () => {
    let accepted = 0;
    fc.assert(
      fc.property(kind, input, settings, (recordKind, candidate, chosen) => {
        let projected;
        try {
          projected = projectTraceEvent(recordKind, candidate, chosen);
        } catch (error) {
          expect(TraceStoreError.isTraceStoreError(error)).toBe(true);
          return;
        }
        assertWithinAllowLists(recordKind, projected.event as Json);
        const identity = Object.entries(projected.identity);
        expect(identity.length).toBeGreaterThan(0);
        for (const [name, member] of identity) {
          expect(['run_id', 'trace_id', 'workflow_id', 'invocation_id']).toContain(name);
          expect(Buffer.byteLength(member as string)).toBeGreaterThanOrEqual(1);
          expect(Buffer.byteLength(member as string)).toBeLessThanOrEqual(512);
        }
        expect(Object.isFrozen(projected.event)).toBe(true);
        if (chosen.contentPolicy === 'reject') expect(projected.contentPruned).toBe(false);
        accepted++;
      }),
      { numRuns: 2000 },
    );
    // the generators reach the accepting paths, not only the refusals
    expect(accepted).toBeGreaterThan(100);
  });

  it('prunes to a clean event: what prune keeps passes again under reject, unchanged', () => {
    let pruned = 0;
    fc.assert(
      fc.property(kind, nearlyValid, (recordKind, candidate) => {
        let first;
        try {
          first = projectTraceEvent(recordKind, candidate, PRUNE);
        } catch {
          return;
        }
        const again = projectTraceEvent(recordKind, first.event, REJECT);
        expect(again.event).toEqual(first.event);
        expect(again.identity).toEqual(first.identity);
        expect(again.contentPruned).toBe(false);
        if (first.contentPruned) pruned++;
      }),
      { numRuns: 1000 },
    );
    expect(pruned).toBeGreaterThan(50);
  });
});

/** The base projection plus the empty containers a patch introduced (a dropped member leaves its object behind). */
function withEmptyContainers(base: Readonly<Record<string, unknown>>, patch: Json, containers: readonly string[]): Json {
  const expected: Json = jsonClone(base) as Json;
  for (const [key, value] of Object.entries(patch)) {
    if (isObject(value) && containers.includes(key) && expected[key] === undefined) expected[key] = {};
  }
  return expected;
}
