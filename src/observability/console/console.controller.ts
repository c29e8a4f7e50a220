import { Get, Header, Inject, type MessageEvent, Optional, Req, Sse, UseFilters } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { AgentRuntimeExceptionFilter } from '../../http/agent-runtime-exception.filter';
import type { AuditChainReport } from '../../policy/audit-log/audit-chain-verification';
import { AuditChainVerifier } from '../../policy/audit-log/audit-chain-verifier';
import { RuntimePolicyError } from '../../policy/runtime-policy.errors';
import { systemClock } from '../../shared/time/clock';
import { consolePage, type ConsolePageBases } from './assets/console-page';
import { CONSOLE_SCRIPT } from './assets/console-script';
import { CONSOLE_STYLE } from './assets/console-style';
import { CONSOLE_OPTIONS, type ResolvedConsoleOptions } from './console-options';
import { ConsoleSnapshotService } from './console-snapshot.service';
import { snapshotEvents } from './console-stream';
import { viewerOf } from './console-viewer.guard';

/**
 * The page's policy: its script and style come from the console's own routes only (no inline code),
 * it talks to its own origin only, and it may not be framed.
 */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PREFIX = /^(?:\/[A-Za-z0-9._~%-]+)*$/;

/**
 * The console's routes below its path: the page, its script and style, the snapshot stream
 * (`events`) and the audit chain's verification (`audit/verify`). `ConsoleModule.forRoot` mounts a
 * subclass at the configured path, behind the application's guard.
 */
@UseFilters(AgentRuntimeExceptionFilter)
export class ConsoleController {
  constructor(
    @Inject(CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
    @Inject(ConsoleSnapshotService) private readonly snapshots: ConsoleSnapshotService,
    @Optional() @Inject(AuditChainVerifier) private readonly auditChain: AuditChainVerifier | null,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', CONSOLE_CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('Cache-Control', 'no-store')
  page(@Req() request: unknown): string {
    return consolePage(this.basesOf(request));
  }

  @Get('console.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  script(): string {
    return CONSOLE_SCRIPT;
  }

  @Get('console.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  style(): string {
    return CONSOLE_STYLE;
  }

  /** `text/event-stream` of content-free snapshots (see `ConsoleSnapshot`) of what the viewer may see. */
  @Sse('events')
  events(@Req() request: unknown): Observable<MessageEvent> {
    const viewer = viewerOf(request);
    return snapshotEvents(() => this.snapshots.snapshot(viewer), { clock: systemClock, refreshMs: this.options.refreshMs });
  }

  /** The audit chain's verification report (never decision content), or that no Postgres audit log is configured. */
  @Get('audit/verify')
  @Header('Cache-Control', 'no-store')
  async verify(): Promise<AuditChainReport | { status: 'no_postgres_audit_log' }> {
    try {
      if (!this.auditChain) throw new RuntimePolicyError('runtime_policy_audit_log_not_configured');
      return await this.auditChain.verify();
    } catch (error) {
      if (RuntimePolicyError.isRuntimePolicyError(error) && error.code === 'runtime_policy_audit_log_not_configured') return { status: 'no_postgres_audit_log' };
      throw error;
    }
  }

  /**
   * The console's path as the browser reached it and the part before it (the app's global prefix),
   * from the request's path: the package's routes are found below that prefix.
   */
  private basesOf(request: unknown): ConsolePageBases {
    const url = (request as { originalUrl?: unknown; url?: unknown }).originalUrl ?? (request as { url?: unknown }).url;
    const pathname = (typeof url === 'string' ? url.split('?')[0] : '').replace(/\/+$/, '');
    const path = this.options.path;
    const cut = pathname.length - path.length;
    const prefix = cut >= 0 && pathname.slice(cut).toLowerCase() === path.toLowerCase() ? pathname.slice(0, cut) : '';
    const apiBase = PREFIX.test(prefix) ? prefix : '';
    return { consoleBase: apiBase + path, apiBase };
  }
}
