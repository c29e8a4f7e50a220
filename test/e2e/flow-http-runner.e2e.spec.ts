/**
 * The Runner reports how its model calls went on its admission permit (spec 09 §6), end to end: the
 * real openai-compatible model against a Chat Completions server on loopback that answers 429 or
 * 503, and a real controller with an adaptive limit for the agent, whose effective limit falls.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdmissionController } from '../../src/admission/admission-controller';
import { OpenAICompatibleModel } from '../../src/runner/models/openai-compatible-model';
import { AGENT, expectError, makeRunner, runnerError, USER } from '../../src/runner/testing/runner-harness';

/** A loopback Chat Completions server answering every request with `status`. */
async function chatServer(status: number): Promise<{ baseUrl: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      const body =
        status === 200
          ? { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] }
          : { error: { message: 'slow down', type: 'rate_limit_error' } };
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const CONFIG = { agentLimits: { [AGENT]: 4 }, adaptive: { [AGENT]: { min: 1, decreaseIntervalMs: 0 } } };

describe('Runner model outcome reports against a real provider answer (spec 09 §6)', () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it.each([429, 503])('a model call answered %i reports overloaded: the agent effective limit falls from 4 to 3', async (status) => {
    const server = await chatServer(status);
    servers.push(server);
    const controller = new AdmissionController(CONFIG);
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, model: 'gpt-test', apiKey: 'sk-test' });
    const runner = makeRunner({ agent: { name: AGENT, model }, admission: { controller } });
    // a held permit keeps the agent in status() so its effective limit shows after the run ends
    const held = await controller.acquire(AGENT);

    const error = await runnerError(runner.run({ userId: USER, sessionId: `ses-${status}`, message: 'hello' }));
    expectError(error, 'model_failed', { reason: 'http_status', status });
    expect(server.requests()).toBe(1);
    expect(controller.status().per_agent[AGENT]).toMatchObject({ active: 1, limit: 4, effective_limit: 3 });
    controller.release(held);
  });

  it('a model call that answers reports ok: the effective limit stays at the static limit', async () => {
    const server = await chatServer(200);
    servers.push(server);
    const controller = new AdmissionController(CONFIG);
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, model: 'gpt-test', apiKey: 'sk-test' });
    const runner = makeRunner({ agent: { name: AGENT, model }, admission: { controller } });
    const held = await controller.acquire(AGENT);

    const result = await runner.run({ userId: USER, sessionId: 'ses-ok', message: 'hello' });
    expect(result.status).toBe('completed');
    expect(controller.status().per_agent[AGENT]).toMatchObject({ active: 1, effective_limit: 4 });
    controller.release(held);
  });
});
