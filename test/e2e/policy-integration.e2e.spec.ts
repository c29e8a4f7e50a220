/**
 * The runtime policy next to the rest of the app (spec 02 §6, §8): `agent_runtime.policy.decision`
 * telemetry through `EventEmitter2`, and `@Admission` on the same handler (guard first, permit
 * released on a policy denial).
 */
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { AdmissionController } from '../../src/admission/admission-controller';
import { Admission } from '../../src/admission/admission.decorator';
import { AdmissionModule } from '../../src/admission/admission.module';
import { AgentEndpoint } from '../../src/policy/policy-endpoint.decorator';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { BASE_CONFIG, waitFor } from './support/harness';
import {
  argsOfSize,
  ARG_LIMIT,
  BODY_CANARY,
  CONTENT_LIMIT,
  RecordingSink,
  RESULT_CANARY,
  usePolicyApps,
  type PolicyApp,
} from './support/policy-harness';
import { PolicyProbe, PolicyRoutesController } from './support/policy-routes';

/** What the agent input extractor saw: admission's active count at the moment of the agent check. */
let admissionAtCheck: AdmissionController | undefined;
const inputNotingAdmission = (request: { body?: unknown }) => {
  noted.push({ active_at_check: admissionAtCheck?.status().active });
  return request.body ?? '';
};
const noted: Array<Record<string, unknown>> = [];

@Controller('adm')
class AdmittedPolicyController {
  constructor(
    private readonly probe: PolicyProbe,
    private readonly admission: AdmissionController,
  ) {}

  @Post('helper')
  @HttpCode(200)
  @Admission('helper')
  @AgentEndpoint({ agent: 'helper', input: inputNotingAdmission })
  helper(@Body() body: unknown): unknown {
    this.probe.enter('adm/helper', body);
    this.probe.notes.push({ active_in_handler: this.admission.status().active });
    return this.probe.output();
  }

  /** Policy decorator listed first, admission second. */
  @Post('stranger')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'stranger', input: inputNotingAdmission })
  @Admission('stranger')
  stranger(@Body() body: unknown): unknown {
    this.probe.enter('adm/stranger', body);
    return { never: 'sent' };
  }

  /** Admission listed first, policy second. */
  @Post('rogue')
  @HttpCode(200)
  @Admission('rogue')
  @AgentEndpoint({ agent: 'rogue', input: inputNotingAdmission })
  rogue(@Body() body: unknown): unknown {
    this.probe.enter('adm/rogue', body);
    return { never: 'sent' };
  }
}

describe('runtime policy telemetry', () => {
  const start = usePolicyApps();

  const EVENT_KEYS = ['limit_bytes', 'measured_bytes', 'operation', 'outcome', 'policy_id', 'reason'];

  it('emits one agent_runtime.policy.decision event per check, with the documented content-free payload', async () => {
    const t = await start({ moduleOptions: { auditLog: new RecordingSink() } });

    expect((await t.post('/p/agents/helper', { prompt: BODY_CANARY })).status).toBe(200);
    expect(t.policyEvents()).toEqual([
      { limit_bytes: CONTENT_LIMIT, measured_bytes: expect.any(Number), policy_id: 'e2e-policy', operation: 'agent_invocation', outcome: 'allow', reason: 'allowed' },
      { limit_bytes: CONTENT_LIMIT, measured_bytes: expect.any(Number), policy_id: 'e2e-policy', operation: 'content', outcome: 'allow', reason: 'allowed' },
    ]);

    expect((await t.post('/p/agents/stranger', { prompt: BODY_CANARY })).status).toBe(403);
    expect((await t.post('/p/tools/shell', { cmd: BODY_CANARY })).status).toBe(403);
    expect((await t.post('/p/tools/search', argsOfSize(ARG_LIMIT + 1, BODY_CANARY))).status).toBe(413);
    t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
    expect((await t.post('/p/tools/search', { q: BODY_CANARY.slice(0, 12) })).status).toBe(413);

    const events = t.policyEvents();
    expect(events.slice(2)).toEqual([
      { limit_bytes: CONTENT_LIMIT, policy_id: 'e2e-policy', operation: 'agent_invocation', outcome: 'deny', reason: 'not_allowed' },
      { limit_bytes: ARG_LIMIT, policy_id: 'e2e-policy', operation: 'tool_call', outcome: 'deny', reason: 'explicitly_denied' },
      { limit_bytes: ARG_LIMIT, measured_bytes: ARG_LIMIT + 1, policy_id: 'e2e-policy', operation: 'tool_call', outcome: 'deny', reason: 'argument_budget_exceeded' },
      { limit_bytes: ARG_LIMIT, measured_bytes: expect.any(Number), policy_id: 'e2e-policy', operation: 'tool_call', outcome: 'allow', reason: 'allowed' },
      { limit_bytes: CONTENT_LIMIT, measured_bytes: expect.any(Number), policy_id: 'e2e-policy', operation: 'content', outcome: 'deny', reason: 'content_budget_exceeded' },
    ]);
    for (const payload of events) {
      expect(Object.isFrozen(payload)).toBe(true);
      expect(EVENT_KEYS).toEqual(expect.arrayContaining(Object.keys(payload)));
      // measured_bytes is present only when it is not null
      if ('measured_bytes' in payload) expect(payload.measured_bytes).not.toBeNull();
    }
    const serialised = JSON.stringify(events);
    for (const secret of [BODY_CANARY, BODY_CANARY.slice(0, 12), RESULT_CANARY, 'stranger', 'shell', 'model_output', 'decision-']) {
      expect(serialised).not.toContain(secret);
    }
  });

  it('emits through EventEmitter2 even without an audit log, and an app without EventEmitterModule still enforces the policy', async () => {
    const withEvents = await start();
    expect((await withEvents.post('/p/agents/stranger', {})).status).toBe(403);
    expect(withEvents.policyEvents()).toHaveLength(1);

    const withoutEvents = await start({ eventEmitter: false });
    expect((await withoutEvents.post('/p/agents/stranger', {})).status).toBe(403);
    expect((await withoutEvents.post('/p/agents/helper', {})).status).toBe(200);
  });

  it('keeps serving when a policy event listener throws', async () => {
    const t = await start({ moduleOptions: { auditLog: new RecordingSink() } });
    const { EventEmitter2 } = await import('@nestjs/event-emitter');
    t.app.get(EventEmitter2).on('agent_runtime.policy.decision', () => {
      throw new Error('listener broke');
    });
    expect((await t.post('/p/agents/helper', {})).status).toBe(200);
    expect((await t.post('/p/agents/stranger', {})).status).toBe(403);
  });

  it('binds the provided RuntimePolicy to the EventEmitter2 of the app', async () => {
    const t = await start();
    const before = t.policyEvents().length;
    t.app.get(RuntimePolicy).checkTool('calc', { a: 1 });
    expect(t.policyEvents().length).toBe(before + 1);
  });
});

describe('runtime policy with @Admission on the same handler', () => {
  const start = usePolicyApps();

  async function startAdmitted(): Promise<PolicyApp> {
    noted.length = 0;
    const t = await start({
      imports: [AdmissionModule.forRoot(BASE_CONFIG)],
      controllers: [AdmittedPolicyController, PolicyRoutesController],
      moduleOptions: { auditLog: new RecordingSink() },
    });
    admissionAtCheck = t.app.get(AdmissionController);
    return t;
  }

  afterEach(() => {
    admissionAtCheck = undefined;
  });

  it('runs the admission guard first: the permit is held when the agent is checked, and released after the response', async () => {
    const t = await startAdmitted();
    const admission = t.app.get(AdmissionController);
    const result = await t.post('/adm/helper', { prompt: 'hi' });
    expect(result.status).toBe(200);
    expect(noted).toEqual([{ active_at_check: 1 }]);
    expect(t.probe.notes).toEqual([{ active_in_handler: 1 }]);
    await waitFor(() => admission.status().active === 0, 'the permit to be released');
    // the admission grant is emitted before the policy decisions, the release after them
    expect(t.probe.timeline.filter((step) => step.startsWith('event:'))).toEqual([
      'event:admission:granted',
      'event:policy:allow',
      'event:policy:allow',
      'event:admission:released',
    ]);
  });

  it.each([
    ['policy decorator above admission', '/adm/stranger', 'not_allowed'],
    ['admission decorator above policy', '/adm/rogue', 'explicitly_denied'],
  ])('releases the permit when the policy denies the request (%s)', async (_, path, reason) => {
    const t = await startAdmitted();
    const admission = t.app.get(AdmissionController);
    const result = await t.post(path, { prompt: BODY_CANARY });
    expect(result.status).toBe(403);
    expect(result.body).toMatchObject({ code: 'runtime_policy_denied', decision: { operation: 'agent_invocation', reason } });
    expect(result.text).not.toContain(BODY_CANARY);
    expect(t.probe.ran).toEqual([]);
    expect(noted).toEqual([{ active_at_check: 1 }]);
    await waitFor(() => admission.status().active === 0, 'the permit to be released after the denial');
    expect(admission.status().queue_length).toBe(0);

    // the slot is really free: the agent limit (2) admits two more denials in parallel
    const again = await Promise.all([t.post(path, {}), t.post(path, {})]);
    expect(again.map((r) => r.status)).toEqual([403, 403]);
    await waitFor(() => admission.status().active === 0, 'the permits to be released');
  });

  it('releases the permit when the result is denied after the handler ran', async () => {
    const t = await startAdmitted();
    const admission = t.app.get(AdmissionController);
    t.probe.returns({ reply: RESULT_CANARY.repeat(8) });
    const result = await t.post('/adm/helper', {});
    expect(result.status).toBe(413);
    expect(result.text).not.toContain(RESULT_CANARY);
    expect(t.probe.ran).toEqual(['adm/helper']);
    await waitFor(() => admission.status().active === 0, 'the permit to be released');
  });
});
