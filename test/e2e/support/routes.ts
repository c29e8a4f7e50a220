import {
  Body,
  CanActivate,
  Controller,
  ExecutionContext,
  ForbiddenException,
  Get,
  Inject,
  Injectable,
  Param,
  Post,
  StreamableFile,
  UseGuards,
  ValidationPipe,
} from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { IsInt, Min } from 'class-validator';
import type { ServerResponse } from 'node:http';
import type { Observable } from 'rxjs';
import type { AdmissionService } from '../../../src/admission/admission-service';
import { ADMISSION_SERVICE } from '../../../src/admission/admission.constants';
import { Admission, AdmissionPermit, AdmissionSignal } from '../../../src/admission/admission.decorator';
import { AdmissionHealthIndicator } from '../../../src/admission/admission.health';
import type { Permit } from '../../../src/admission/permit';
import { Probe, type HeldResult } from './probe';

/** The agent id is the `:agent` route parameter. */
export const agentParam = (context: ExecutionContext): string =>
  context.switchToHttp().getRequest<{ params: Record<string, string> }>().params.agent;

/** Short per-route queue timeout used by the deadline test. */
export const SHORT_QUEUE_TIMEOUT_MS = 150;

/** Text of the exception thrown by a broken agent resolver; it must never reach a client. */
export const RESOLVER_CANARY = 'CANARY-resolver-secret-7f3a9c';

export class WorkBody {
  @IsInt() @Min(0)
  n!: number;
}

/** A guard that runs after `AdmissionGuard` (it is listed later) and refuses every request. */
@Injectable()
export class DenyAfterAdmissionGuard implements CanActivate {
  constructor(
    @Inject(ADMISSION_SERVICE) private readonly admission: AdmissionService,
    private readonly probe: Probe,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const { params } = context.switchToHttp().getRequest<{ params: Record<string, string> }>();
    this.probe.notes.push({ guard: 'deny', key: params.key, active_when_denied: this.admission.status().active });
    throw new ForbiddenException({ status_code: 403, error: 'Forbidden', code: 'denied_by_test_guard' });
  }
}

/**
 * A guard that runs before `AdmissionGuard` (it is listed earlier) and waits at gate `slow:<key>`,
 * noting when the response closes: lets a client disconnect before admission is even asked.
 */
@Injectable()
export class SlowBeforeAdmissionGuard implements CanActivate {
  constructor(private readonly probe: Probe) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { params } = context.switchToHttp().getRequest<{ params: Record<string, string> }>();
    const response = context.switchToHttp().getResponse<ServerResponse>();
    response.once('close', () => this.probe.notes.push({ guard: 'slow', key: params.key, closed: true }));
    this.probe.notes.push({ guard: 'slow', key: params.key, waiting: true });
    await this.probe.pass(`slow:${params.key}`);
    return true;
  }
}

/** Routes whose handlers hold until the test lets them go. */
@Controller('work')
export class WorkController {
  constructor(private readonly probe: Probe) {}

  @Get(':agent/reject/:key')
  @Admission(agentParam, { overflow: 'reject' })
  reject(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }

  @Get(':agent/queue/:key')
  @Admission(agentParam, { overflow: 'queue' })
  queue(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }

  @Get(':agent/short-queue/:key')
  @Admission(agentParam, { overflow: 'queue', queueTimeoutMs: SHORT_QUEUE_TIMEOUT_MS })
  shortQueue(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }

  /** Controller defaults for overflow and queue timeout. */
  @Get(':agent/default/:key')
  @Admission(agentParam)
  byDefault(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }

  @Get(':agent/observable/:key')
  @Admission(agentParam)
  observable(@Param('key') key: string): Observable<unknown> {
    return this.probe.stream(key);
  }

  @Post(':agent/validated/:key')
  @Admission(agentParam)
  validated(
    @Param('key') key: string,
    @Body(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true })) body: WorkBody,
    @AdmissionSignal() signal: AbortSignal,
    @AdmissionPermit() permit: Permit,
  ): Promise<HeldResult & { n: number }> {
    return this.probe.hold(key, signal, permit).then((held) => ({ ...held, n: body.n }));
  }

  // listed above @Admission, so it runs after AdmissionGuard
  @UseGuards(DenyAfterAdmissionGuard)
  @Get(':agent/denied/:key')
  @Admission(agentParam)
  denied(@Param('key') key: string): Promise<HeldResult> {
    return this.probe.hold(key);
  }

  // guards run in the order SlowBeforeAdmissionGuard, AdmissionGuard
  @Get(':agent/slow/:key')
  @Admission(agentParam)
  @UseGuards(SlowBeforeAdmissionGuard)
  slow(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }

  // guards run in the order SlowBeforeAdmissionGuard, AdmissionGuard, DenyAfterAdmissionGuard
  @UseGuards(DenyAfterAdmissionGuard)
  @Get(':agent/slow-denied/:key')
  @Admission(agentParam)
  @UseGuards(SlowBeforeAdmissionGuard)
  slowDenied(@Param('key') key: string): Promise<HeldResult> {
    return this.probe.hold(key);
  }

  /** A stream: admitted for producing the value, not for its transfer. */
  @Get(':agent/stream/:key')
  @Admission(agentParam)
  stream(@Param('key') key: string): StreamableFile {
    return new StreamableFile(this.probe.readable(key), { type: 'text/plain' });
  }

  /** A route misconfiguration: the queue timeout is not a safe integer ≥ 0. */
  @Get(':agent/misconfigured/:key')
  @Admission(agentParam, { overflow: 'queue', queueTimeoutMs: -5 })
  misconfigured(@Param('key') key: string): Promise<HeldResult> {
    return this.probe.hold(key);
  }
}

/** `@Admission` on the class, overridden on one handler. */
@Controller('layered')
@Admission('class-agent', { overflow: 'reject' })
export class LayeredController {
  constructor(private readonly probe: Probe) {}

  @Get('class-only/:key')
  classOnly(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }

  @Get('both/:key')
  @Admission('handler-agent', { overflow: 'reject' })
  both(@Param('key') key: string, @AdmissionSignal() signal: AbortSignal, @AdmissionPermit() permit: Permit): Promise<HeldResult> {
    return this.probe.hold(key, signal, permit);
  }
}

/** A route without admission. */
@Controller('open')
export class OpenController {
  @Get()
  open(@AdmissionPermit() permit: Permit | undefined, @AdmissionSignal() signal: AbortSignal | undefined): { permit: string; signal: string } {
    return { permit: permit === undefined ? 'undefined' : 'present', signal: signal === undefined ? 'undefined' : 'present' };
  }
}

/** Agent resolvers that fail in the ways the guard must survive. */
export const brokenResolver = (context: ExecutionContext): string => {
  const kind = context.switchToHttp().getRequest<{ params: Record<string, string> }>().params.kind;
  switch (kind) {
    case 'throws':
      throw new Error(`${RESOLVER_CANARY}: resolver blew up`);
    case 'throws-http':
      throw new ForbiddenException(`${RESOLVER_CANARY}: http exception from resolver`);
    case 'empty':
      return '';
    case 'too-long':
      return 'x'.repeat(257);
    case 'not-a-string':
      return 42 as unknown as string;
    case 'lone-surrogate':
      return 'agent-\uD800';
    default:
      return undefined as unknown as string;
  }
};

@Controller('broken')
export class BrokenResolverController {
  constructor(private readonly probe: Probe) {}

  @Get(':kind')
  @Admission(brokenResolver)
  run(@Param('kind') kind: string): Promise<HeldResult> {
    return this.probe.hold(kind);
  }
}

/** A route whose fixed agent id breaks the id rule: a misconfiguration of the route, not of the request. */
@Controller('broken-fixed')
export class FixedInvalidAgentController {
  @Get()
  @Admission('')
  run(): { ok: true } {
    return { ok: true };
  }
}

/** `POST /agents/:agent/invoke`: the agent id comes straight from the client's path. */
@Controller('agents')
export class AgentInvokeController {
  @Post(':agent/invoke')
  @Admission(agentParam)
  invoke(@AdmissionPermit() permit: Permit): { agent_id: string } {
    return { agent_id: permit.agentId };
  }
}

/**
 * Liveness checks nothing (and is not routed through `HealthCheckService`, which answers 503
 * `shutting_down` for every check once shutdown begins); readiness asks the admission indicator.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly admission: AdmissionHealthIndicator,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.admission.isHealthy()]);
  }
}
