import { type CanActivate, type ExecutionContext, type INestApplication, Injectable, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { thrown } from '../../shared/testing/thrown';
import { CONSOLE_CSP } from './console.controller';
import { ConsoleError } from './console.errors';
import { ConsoleModule } from './console.module';
import type { ConsoleModuleOptions } from './console-options';

/** Lets a request through only with `x-operator: yes`: the application's own guard. */
@Injectable()
class OperatorHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers['x-operator'] === 'yes';
  }
}

class WarningLog implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

async function listen(options: ConsoleModuleOptions, settings: { prefix?: string; logger?: LoggerService } = {}): Promise<{ app: INestApplication; base: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [ConsoleModule.forRoot(options)] }).compile();
  const app = moduleRef.createNestApplication({ logger: settings.logger ?? false, forceCloseConnections: true });
  if (settings.prefix) app.setGlobalPrefix(settings.prefix);
  await app.listen(0, '127.0.0.1');
  return { app, base: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}` };
}

/** The first `event: snapshot` message of the console stream, then the connection is dropped. */
async function firstSnapshot(url: string, headers: Record<string, string>): Promise<{ id: string; data: unknown }> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  try {
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
  } finally {
    abort.abort();
  }
  const message = text.slice(0, text.indexOf('\n\n'));
  const field = (name: string) => message.split('\n').find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
  expect(field('event')).toBe('snapshot');
  return { id: field('id') as string, data: JSON.parse(field('data') as string) };
}

describe('ConsoleModule.forRoot: the guard rule', () => {
  test.each([
    ['no guard and no allowUnauthenticated', { path: '/console' }],
    ['allowUnauthenticated: false', { path: '/console', allowUnauthenticated: false }],
  ])('%s: refuses to start with console_guard_required', (_name, options) => {
    const error = thrown(() => ConsoleModule.forRoot(options));
    expect(ConsoleError.isConsoleError(error)).toBe(true);
    expect(error).toMatchObject({ name: 'ConsoleError', code: 'console_guard_required', message: 'console_guard_required' });
  });

  test('an application importing an unguarded console never compiles', async () => {
    await expect(async () => Test.createTestingModule({ imports: [ConsoleModule.forRoot({ path: '/console' })] }).compile()).rejects.toMatchObject({
      code: 'console_guard_required',
    });
  });

  test.each([
    ['a truthy string instead of true', { path: '/console', allowUnauthenticated: 'true' }, { field: 'allowUnauthenticated' }],
    ['a relative path', { path: 'console', allowUnauthenticated: true }, { field: 'path' }],
    ['the root path', { path: '/', allowUnauthenticated: true }, { field: 'path' }],
    ['a trailing slash', { path: '/console/', allowUnauthenticated: true }, { field: 'path' }],
    ['a dot-dot segment', { path: '/ops/../console', allowUnauthenticated: true }, { field: 'path' }],
    ['a space', { path: '/op s', allowUnauthenticated: true }, { field: 'path' }],
    ['no path', { allowUnauthenticated: true }, { field: 'path' }],
    ['a guard that is no class', { path: '/console', guard: 'OperatorGuard' }, { field: 'guard' }],
    ['an unknown key', { path: '/console', gaurd: OperatorHeaderGuard }, { field: 'gaurd' }],
    ['refreshMs below 100', { path: '/console', allowUnauthenticated: true, refreshMs: 10 }, { field: 'refreshMs' }],
    ['two broken options', { path: 1, allowUnauthenticated: true, maxRuns: 0 }, { fields: ['maxRuns', 'path'] }],
  ])('%s: invalid_console_options', (_name, options, details) => {
    expect(thrown(() => ConsoleModule.forRoot(options as unknown as ConsoleModuleOptions))).toMatchObject({ code: 'invalid_console_options', details });
  });

  test('allowUnauthenticated: true starts the console and says so in a warning', async () => {
    const logger = new WarningLog();
    const { app, base } = await listen({ path: '/console', allowUnauthenticated: true }, { logger });
    try {
      expect((await fetch(`${base}/console`)).status).toBe(200);
      expect(logger.warnings).toEqual(['operator console at /console is served WITHOUT a guard (allowUnauthenticated: true)']);
    } finally {
      await app.close();
    }
  });
});

describe('ConsoleModule routes behind the application guard', () => {
  let app: INestApplication;
  let base: string;
  const operator = { 'x-operator': 'yes' };

  beforeAll(async () => {
    ({ app, base } = await listen({ path: '/ops/console', guard: OperatorHeaderGuard }, { logger: new WarningLog() }));
  });
  afterAll(() => app.close());

  test.each(['/ops/console', '/ops/console/console.js', '/ops/console/console.css', '/ops/console/events', '/ops/console/audit/verify'])('%s: 403 without the guard passing', async (route) => {
    const response = await fetch(`${base}${route}`);
    expect(response.status).toBe(403);
    expect(await response.text()).not.toContain('snapshot');
  });

  test('the page: strict CSP, no inline script, both bases as attributes', async () => {
    const response = await fetch(`${base}/ops/console`, { headers: operator });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).toContain('data-console-base="/ops/console" data-api-base=""');
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/ops/console/console.js" defer>']);
    expect(html).toMatch(/<\/script>/);
    expect(html.replace(/<script src="[^"]+" defer><\/script>/, '')).not.toMatch(/<script/);
  });

  test('the script and the style come from their own routes, and the script never writes markup', async () => {
    const script = await fetch(`${base}/ops/console/console.js`, { headers: operator });
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const source = await script.text();
    expect(source).toContain('textContent');
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    const style = await fetch(`${base}/ops/console/console.css`, { headers: operator });
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  test('the stream starts with a snapshot whose sections are null for the modules the app lacks', async () => {
    const snapshot = await firstSnapshot(`${base}/ops/console/events`, operator);
    expect(snapshot).toEqual({
      id: '1',
      data: { schema_version: 1, admission: null, runs: null, confirmations: null, denials: { status: 'no_postgres_audit_log' } },
    });
  });

  test('audit verification without a Postgres audit log says so', async () => {
    const response = await fetch(`${base}/ops/console/audit/verify`, { headers: operator });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'no_postgres_audit_log' });
  });
});

describe('ConsoleModule under a global prefix', () => {
  test("the page points at the prefixed console and at the package's routes below the prefix", async () => {
    const { app, base } = await listen({ path: '/console', allowUnauthenticated: true }, { prefix: 'api', logger: new WarningLog() });
    try {
      for (const route of ['/api/console', '/api/console/']) {
        const html = await (await fetch(`${base}${route}`)).text();
        expect(html).toContain('data-console-base="/api/console" data-api-base="/api"');
        expect(html).toContain('<script src="/api/console/console.js" defer>');
      }
      expect((await fetch(`${base}/console`)).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
