/** HTTP of the consumer matrix: JSON requests, and a run followed over Server-Sent Events. */

/** The consumer app's demo credential: its `resolvePrincipal` answers `{id: 'consumer'}` for it. */
export const AS_CONSUMER = Object.freeze({ authorization: 'Bearer consumer-token' });

/** Sends a request as the consumer; resolves `{ status, text, json }` (`json` null when the body is not JSON). */
export async function request(base, method, path, body, timeoutMs = 15_000) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...AS_CONSUMER, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: the caller reads `text`
  }
  return { status: response.status, text, json };
}

/** `status` of a response and the start of its body, for a failure line. */
export const shown = (response) => `${response.status} ${response.text.slice(0, 300)}`;

/** Polls `path` until it answers anything (the server listens); false when `alive()` turns false or time runs out. */
export async function waitForListening(base, path, alive, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive()) return false;
    try {
      await fetch(`${base}${path}`, { signal: AbortSignal.timeout(2_000) });
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return false;
}

/**
 * Follows `GET path` as Server-Sent Events until an event of type `terminal` (or the end of the
 * stream, or `timeoutMs`). Resolves `{ status, contentType, items }`, each item `{ id, event, data }`
 * with `data` parsed as JSON when it is.
 */
export async function followEvents(base, path, timeoutMs = 20_000) {
  const response = await fetch(`${base}${path}`, { headers: { ...AS_CONSUMER, accept: 'text/event-stream' }, signal: AbortSignal.timeout(timeoutMs) });
  const result = { status: response.status, contentType: response.headers.get('content-type') ?? '', items: [] };
  if (response.status !== 200 || !response.body) return result;
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const item = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (!item) continue;
        result.items.push(item);
        if (item.event === 'terminal') return result;
      }
    }
  } catch (error) {
    result.error = error instanceof Error ? error.name : 'stream error';
  }
  return result;
}

/** One SSE block (`id:`, `event:`, `data:` lines; comments ignored), or null for a comment-only block. */
function parseEvent(block) {
  const item = { id: null, event: 'message', data: '' };
  let seen = false;
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') item.id = value;
    else if (field === 'event') item.event = value;
    else if (field === 'data') item.data += (item.data ? '\n' : '') + value;
    else continue;
    seen = true;
  }
  if (!seen) return null;
  try {
    item.data = JSON.parse(item.data);
  } catch {
    // kept as text
  }
  return item;
}
