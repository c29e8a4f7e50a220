import type { HttpResult } from './support/http-client';
import { RecordingLogger } from './support/harness';
import { useReferenceService } from './support/reference-service';

import { gzipSync } from 'node:zlib';

const CANARY = 'canary-5d1e-secret';

/** The reference service as `npm start` sets it up, driven with bodies and ids an attacker would send. */
describe('reference service under hostile input', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) => service.http.send(path, { method: 'POST', body, headers }).result;

  const expectCode = (result: HttpResult, status: number, code: string) => {
    expect({ status: result.status, body: result.body }).toMatchObject({ status, body: { status_code: status, code } });
    expect(typeof result.body.error).toBe('string');
  };

  describe('bodies that used to answer 500', () => {
    it('refuses a 10,000-deep JSON body with 400 body_too_deep before ValidationPipe walks it', async () => {
      const deep = `{"work_ms":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
      const result = await post('/agents/a/invoke', deep);
      expectCode(result, 400, 'body_too_deep');
      expect(result.body.details).toEqual({ max_depth: 64 });
    });

    it('accepts a body nested up to the limit, brackets inside strings not counted', async () => {
      const result = await post('/chat/helper', JSON.stringify({ prompt: '[[[[{{{{'.repeat(20), nested: nest(62) }));
      expect(result.status).toBe(200);
    });

    it('refuses a text/plain body on /chat/helper with 415 unsupported_media_type', async () => {
      const result = await post('/chat/helper', `prompt=${CANARY}`, { 'content-type': 'text/plain' });
      expectCode(result, 415, 'unsupported_media_type');
      expect(result.text).not.toContain(CANARY);
    });

    it('refuses a text/plain body on /tools/search with 415 unsupported_media_type', async () => {
      expectCode(await post('/tools/search', 'results=3', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    });
  });

  describe('body-parser failures answer with a code and never the body', () => {
    it('invalid JSON is 400 invalid_json without the parser message', async () => {
      const result = await post('/chat/helper', `{"prompt": "${CANARY}`);
      expect(result.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_json' });
      expect(result.text).not.toContain(CANARY);
    });

    it('a non-object JSON text (strict mode) is 400 invalid_json', async () => {
      const result = await post('/chat/helper', `"${CANARY}"`);
      expectCode(result, 400, 'invalid_json');
      expect(result.text).not.toContain(CANARY);
    });

    it('an unsupported charset is 415 unsupported_charset', async () => {
      const result = await post('/chat/helper', JSON.stringify({ prompt: CANARY }), { 'content-type': 'application/json; charset=latin1' });
      expect(result.body).toEqual({ status_code: 415, error: 'Unsupported Media Type', code: 'unsupported_charset' });
    });

    it('an unsupported content encoding is 415 unsupported_content_encoding', async () => {
      const result = await post('/chat/helper', JSON.stringify({ prompt: CANARY }), { 'content-encoding': 'x-canary' });
      expect(result.body).toEqual({ status_code: 415, error: 'Unsupported Media Type', code: 'unsupported_content_encoding' });
    });

    it.each(['gzip', 'deflate', 'br'])('a body that does not %s-inflate is 400 invalid_compressed_body, not 500', async (encoding) => {
      const result = await post('/chat/helper', `${CANARY} is not compressed`, { 'content-encoding': encoding });
      expect(result.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_compressed_body' });
      expect(result.text).not.toContain(CANARY);
      expect(logger.entries.map((entry) => entry.text).join('\n')).not.toContain(CANARY);
    });

    it('a valid gzip body is read', async () => {
      const result = await post('/chat/helper', gzipSync(JSON.stringify({ prompt: 'hi' })), { 'content-encoding': 'gzip' });
      expect(result.status).toBe(200);
    });

    it('a body over the 100 kB limit is 413 body_too_large', async () => {
      const result = await post('/chat/helper', JSON.stringify({ prompt: CANARY.repeat(10_000) }));
      expect(result.body).toEqual({ status_code: 413, error: 'Payload Too Large', code: 'body_too_large', details: { limit: 102_400 } });
    });

    it('a key the DTO does not declare is 400 invalid_request_body without the key', async () => {
      const result = await post('/agents/a/invoke', JSON.stringify({ work_ms: 1, [CANARY]: 1 }));
      expectCode(result, 400, 'invalid_request_body');
      expect(result.body.details).toEqual({ unknown_fields: 1 });
      expect(result.text).not.toContain(CANARY);
    });

    it('a DTO property that breaks its rule is named', async () => {
      const result = await post('/agents/a/invoke', JSON.stringify({ work_ms: -1 }));
      expect(result.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_request_body', details: { field: 'work_ms' } });
    });

    it('an unknown route is 404 not_found without the path', async () => {
      const result = await service.http.send(`/${CANARY}`).result;
      expect(result.body).toEqual({ status_code: 404, error: 'Not Found', code: 'not_found' });
    });
  });

  describe('ids in logs', () => {
    it('refuses a control-character agent id with 400 and never logs a raw control character', async () => {
      const result = await post('/agents/a%0A%1B%5B31mFAKE/invoke', '{}');
      expectCode(result, 400, 'invalid_agent_id');
      const logged = logger.entries.map((entry) => entry.text).join('\n');
      expect(logged).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(logged).not.toMatch(/\n\S*FAKE/);
    });

    it('logs an admitted id as an escaped field, so a quote cannot forge a field', async () => {
      const result = await post('/agents/a%22%20outcome%3Dforged/invoke', JSON.stringify({ work_ms: 0 }));
      expect(result.status).toBe(200);
      const lines = logger.entries.map((entry) => entry.text).filter((text) => text.includes('forged'));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toContain('agent="a\\" outcome=forged"');
    });
  });
});

function nest(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { v: value };
  return value;
}
