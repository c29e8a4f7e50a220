import { Body, Controller, Get, HttpCode, Injectable, Post } from '@nestjs/common';
import { from, type Observable } from 'rxjs';
import { AgentEndpoint, ToolEndpoint } from '../../../src/policy/policy-endpoint.decorator';

/** Text of the exception an extractor throws; it must never reach a client or a log. */
export const EXTRACTOR_CANARY = 'CANARY-extractor-exception-5e2f70';

/** What a handler returns when the test did not set anything: small, with every JSON kind. */
export const DEFAULT_RESULT = Object.freeze({ ok: true, n: -1.5, text: 'é✓ "q" \\', list: [1, 'two', null, false], nested: { z: {}, a: [] } });

/**
 * Test double of the agent/tool work behind the policy routes: it notes which handlers ran (and in
 * what order relative to the audit sink and the events), and returns what the test chose.
 */
@Injectable()
export class PolicyProbe {
  /** Route names, in the order their handlers ran. */
  readonly ran: string[] = [];
  /** Bodies the handlers saw. */
  readonly bodies: unknown[] = [];
  /** Handler runs, sink steps and events, interleaved as they happened. */
  readonly timeline: string[] = [];
  /** Free-form notes (e.g. what an extractor saw). */
  readonly notes: Array<Record<string, unknown>> = [];
  /** Reads of the getter of the object {@link trap} returns. */
  getterReads = 0;
  private result: { value: unknown } | undefined;
  private emissions: unknown[] | undefined;

  /** The next handler returns `value` (even `undefined`). */
  returns(value: unknown): void {
    this.result = { value };
  }

  /** The next observable handler emits these values, then completes. */
  emits(...values: unknown[]): void {
    this.emissions = values;
  }

  enter(route: string, body?: unknown): void {
    this.ran.push(route);
    this.bodies.push(body);
    this.timeline.push(`handler:${route}`);
  }

  output(): unknown {
    const result = this.result;
    this.result = undefined;
    return result ? result.value : DEFAULT_RESULT;
  }

  stream(): Observable<unknown> {
    const values = this.emissions ?? [DEFAULT_RESULT];
    this.emissions = undefined;
    return from(values);
  }

  /** An object whose only property is a getter that counts its reads. */
  trap(): object {
    const probe = this;
    return Object.defineProperty({}, 'secret', {
      enumerable: true,
      get() {
        probe.getterReads += 1;
        return 'read';
      },
    });
  }
}

type Req = { body?: any };

const throwing = (): never => {
  throw new Error(EXTRACTOR_CANARY);
};

/** Agent and tool routes behind `E2E_POLICY` (see policy-harness.ts). */
@Controller('p')
export class PolicyRoutesController {
  constructor(private readonly probe: PolicyProbe) {}

  @Post('agents/helper')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'helper' })
  helper(@Body() body: unknown): unknown {
    this.probe.enter('agents/helper', body);
    return this.probe.output();
  }

  /** The same agent without a body (GET). */
  @Get('agents/helper')
  @AgentEndpoint({ agent: 'helper' })
  helperWithoutBody(): unknown {
    this.probe.enter('agents/helper:get');
    return this.probe.output();
  }

  @Post('agents/helper/async')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'helper' })
  async helperAsync(@Body() body: unknown): Promise<unknown> {
    this.probe.enter('agents/helper/async', body);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return this.probe.output();
  }

  @Post('agents/helper/stream')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'helper' })
  helperStream(@Body() body: unknown): Observable<unknown> {
    this.probe.enter('agents/helper/stream', body);
    return this.probe.stream();
  }

  /** `stranger` is in no allow list. */
  @Post('agents/stranger')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'stranger' })
  stranger(@Body() body: unknown): unknown {
    this.probe.enter('agents/stranger', body);
    return { never: 'sent' };
  }

  /** `rogue` is allowed and denied: deny wins. */
  @Post('agents/rogue')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'rogue' })
  rogue(@Body() body: unknown): unknown {
    this.probe.enter('agents/rogue', body);
    return { never: 'sent' };
  }

  /** Custom extractor: only `body.prompt` is the agent input. */
  @Post('agents/writer')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'writer', input: (req: Req) => req.body?.prompt })
  writer(@Body() body: unknown): unknown {
    this.probe.enter('agents/writer', body);
    return this.probe.output();
  }

  @Post('agents/writer/broken')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'writer', input: throwing })
  writerBroken(@Body() body: unknown): unknown {
    this.probe.enter('agents/writer/broken', body);
    return { never: 'sent' };
  }

  @Post('tools/search')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'search' })
  search(@Body() body: unknown): unknown {
    this.probe.enter('tools/search', body);
    return this.probe.output();
  }

  @Get('tools/search')
  @ToolEndpoint({ tool: 'search' })
  searchWithoutBody(): unknown {
    this.probe.enter('tools/search:get');
    return this.probe.output();
  }

  @Post('tools/search/stream')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'search' })
  searchStream(@Body() body: unknown): Observable<unknown> {
    this.probe.enter('tools/search/stream', body);
    return this.probe.stream();
  }

  /** `shell` is allowed and denied: deny wins. */
  @Post('tools/shell')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'shell' })
  shell(@Body() body: unknown): unknown {
    this.probe.enter('tools/shell', body);
    return { never: 'sent' };
  }

  /** Custom extractor: only `body.args` are the tool arguments. */
  @Post('tools/calc')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'calc', args: (req: Req) => req.body?.args })
  calc(@Body() body: unknown): unknown {
    this.probe.enter('tools/calc', body);
    return this.probe.output();
  }

  @Post('tools/calc/broken')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'calc', args: throwing })
  calcBroken(@Body() body: unknown): unknown {
    this.probe.enter('tools/calc/broken', body);
    return { never: 'sent' };
  }

  /** A denied tool whose extractor yields an object with a counting getter. */
  @Post('tools/shell/trap')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'shell', args: () => trapSource.probe?.trap() })
  shellTrap(): unknown {
    this.probe.enter('tools/shell/trap');
    return { never: 'sent' };
  }

  /** An allowed tool whose extractor yields an object with a counting getter. */
  @Post('tools/calc/trap')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'calc', args: () => trapSource.probe?.trap() })
  calcTrap(): unknown {
    this.probe.enter('tools/calc/trap');
    return this.probe.output();
  }
}

/** Extractors run outside DI: the test points this at the app's probe. */
export const trapSource: { probe: PolicyProbe | undefined } = { probe: undefined };
