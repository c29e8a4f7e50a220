/**
 * Builders of evaluation submit requests (spec 05 §4.1) for tests: a valid one, and hostile ones that
 * each pass exactly one bound of the pre-walk or of the preparation.
 */

const MiB = 1024 * 1024;

/** A submit request as a client sends it (loosely typed: tests also build invalid ones from it). */
export interface SubmitRequest {
  set: { id: string; version: string; cases: Record<string, unknown>[] };
  agent: string;
  metrics: Record<string, unknown>[];
  options?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/**
 * A valid request: set `smoke`/`v1` with two cases (one with `expected_output`, one with
 * `expected_tool_calls`), agent `assistant`, both metric kinds, `case_timeout_ms` 5000 and metadata.
 * `overrides` replace top-level members (a member set to `undefined` is left out).
 */
export function validSubmitRequest(overrides: Partial<Record<keyof SubmitRequest, unknown>> = {}): SubmitRequest {
  const request: Record<string, unknown> = {
    set: {
      id: 'smoke',
      version: 'v1',
      cases: [
        { case_id: 'greeting', input: 'Say hello', expected_output: 'hello' },
        { case_id: 'lookup', input: { role: 'user', parts: [{ text: 'Weather in Paris?' }] }, expected_tool_calls: [{ name: 'get_weather', args: { city: 'Paris' } }] },
      ],
    },
    agent: 'assistant',
    metrics: [{ name: 'response_match', threshold: 0.5 }, { name: 'tool_trajectory' }],
    options: { case_timeout_ms: 5000 },
    metadata: { build: '1.2.3', owner: { team: 'evals' } },
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete request[key];
    else request[key] = value;
  }
  return request as unknown as SubmitRequest;
}

/** A valid request whose `metrics` array has `count` elements: the pre-walk refuses it at once (`nodes`). */
export function metricsFloodRequest(count = 500_000): SubmitRequest {
  return validSubmitRequest({ metrics: Array.from({ length: count }, () => ({ name: 'response_match' })) });
}

/** A request whose metadata nests `depth` objects (beyond 64 → `depth`); built iteratively. */
export function deepMetadataRequest(depth = 10_000): SubmitRequest {
  let nested: Record<string, unknown> = {};
  for (let level = 1; level < depth; level++) nested = { next: nested };
  return validSubmitRequest({ metadata: nested });
}

/** A request carrying `bytes` of string data in one metadata value (beyond 2 MiB → `bytes`). */
export function oversizedRequest(bytes = 2 * MiB + 1024): SubmitRequest {
  return validSubmitRequest({ metadata: { blob: 'x'.repeat(bytes) } });
}

/**
 * A request within the pre-walk's string bound (1 MiB of strings) whose canonical JSON passes 2 MiB
 * because control characters print as six-byte `\u00XX` escapes: only the preparation refuses it (`bytes`).
 */
export function escapeHeavyRequest(): SubmitRequest {
  return validSubmitRequest({ metadata: { controls: '\u0001'.repeat(MiB) } });
}

/** Values in `value` as the pre-walk counts them: every value, the root and every object member included. */
export function countNodes(value: unknown): number {
  let nodes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    nodes++;
    if (typeof current === 'object' && current !== null) pending.push(...Object.values(current));
  }
  return nodes;
}

/**
 * A valid request of exactly `nodes` nodes (default 49,999, one below the bound) with 10,000 cases
 * (the most a set may hold) whose inputs carry `inputBytes` each, padded to the node count with
 * numbers in `metadata.padding`; its canonical JSON stays below 2 MiB with the defaults.
 */
export function nearLimitRequest(nodes = 49_999, inputBytes = 120): SubmitRequest {
  const cases = Array.from({ length: 10_000 }, (_, index) => ({
    case_id: `case-${index}`,
    input: `${index} ${'q'.repeat(inputBytes)}`.slice(0, inputBytes),
    expected_output: 'ok',
  }));
  const request = validSubmitRequest({ set: { id: 'near-limit', version: 'v1', cases }, metrics: [{ name: 'response_match' }], options: undefined, metadata: { padding: [] } });
  const padding = nodes - countNodes(request);
  if (padding < 0) throw new RangeError(`a near-limit request needs at least ${countNodes(request)} nodes`);
  (request.metadata as { padding: number[] }).padding = Array.from({ length: padding }, (_, index) => index);
  return request;
}
