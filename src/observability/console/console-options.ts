import type { Observable } from 'rxjs';
import { PRINCIPAL_OPTION_RULES, PrincipalGate, type Principal, type PrincipalOptions } from '../../http/principal';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { integerIn, isBoolean, isFunction } from '../../shared/options/option-rules';
import { ConsoleError } from './console.errors';

/** A guard class, as `@UseGuards()` takes it (Nest's `Type<CanActivate>`). */
export type ConsoleGuard = new (...args: never[]) => { canActivate(context: never): boolean | Promise<boolean> | Observable<boolean> };

/** Modules, as a module's `imports` takes them (Nest's `ModuleMetadata['imports']`: classes, dynamic modules, their promises, forward references). */
export type ConsoleImports = readonly object[];

/**
 * Options of `ConsoleModule.forRoot`. With `resolvePrincipal` (or `allowAnonymous`) every console route
 * needs a principal (401 `unauthenticated` otherwise) and the console shows its viewer only the runs and
 * pending confirmations `RunsModule` lets that principal see (owner, or its `authorizeRun` for `list` and
 * `confirm`), denials only when `mayViewDenials` says so, and tenant ids only when `mayViewTenants` says
 * so (others see every tenant's counts folded into `other_tenants`). With a `guard` only, the guard decides who
 * is an operator and every run is shown.
 */
export interface ConsoleModuleOptions extends PrincipalOptions {
  /**
   * Where the page is served, e.g. `'/console'` or `'/ops/console'`: one or more `/`-separated
   * segments of `A-Z a-z 0-9 . _ ~ -` (not dots only). The page's script, style, snapshot stream and audit route
   * live below it (`<path>/console.js`, `<path>/events`, ...).
   */
  readonly path: string;
  /**
   * The application's guard, applied to every console route (`@UseGuards(guard)`). Its own
   * dependencies must be visible to the console module: global providers, or modules in `imports`.
   * Required unless `resolvePrincipal` is given or `allowUnauthenticated` is `true`. @default none
   */
  readonly guard?: ConsoleGuard;
  /**
   * Whether a viewer sees the recent policy denials (they name no run or user, so they are an
   * operator's view), e.g. `(p) => p.roles?.includes('approver')`. Used with `resolvePrincipal`.
   * @default nobody
   */
  readonly mayViewDenials?: (principal: Principal) => boolean;
  /**
   * Whether a viewer sees which tenants have work (the admission panel's tenant rows); a tenant id
   * usually names a customer, so others see the tenants' counts folded into one row. Used with
   * `resolvePrincipal`. @default nobody
   */
  readonly mayViewTenants?: (principal: Principal) => boolean;
  /**
   * Serve the console without any guard. Only an explicit `true` counts; without it, a `guard` and a
   * `resolvePrincipal`, `forRoot` throws `ConsoleError('console_guard_required')`. @default false
   */
  readonly allowUnauthenticated?: boolean;
  /** Modules the guard's dependencies come from. @default [] */
  readonly imports?: ConsoleImports;
  /** How often the snapshot stream looks for changes, in ms (100..60000). @default 1000 */
  readonly refreshMs?: number;
  /** Runs listed in a snapshot, newest first (1..1024). @default 50 */
  readonly maxRuns?: number;
  /** Recent policy denials listed in a snapshot (1..200). @default 20 */
  readonly maxDenials?: number;
}

/** The options with their defaults applied. */
export interface ResolvedConsoleOptions {
  readonly path: string;
  readonly guard: ConsoleGuard | undefined;
  /** The viewer rule; disabled (no viewer: every run shown) without `resolvePrincipal`/`allowAnonymous`. */
  readonly principals: PrincipalGate;
  readonly mayViewDenials: (principal: Principal) => boolean;
  readonly mayViewTenants: (principal: Principal) => boolean;
  readonly imports: ConsoleImports;
  readonly refreshMs: number;
  readonly maxRuns: number;
  readonly maxDenials: number;
}

/** Injection token of the {@link ResolvedConsoleOptions}. */
export const CONSOLE_OPTIONS = Symbol('CONSOLE_OPTIONS');

/** `/`-separated segments of unreserved URL characters; a segment of dots only (`..`) is refused. */
const PATH = /^(?:\/(?!\.+(?:\/|$))[A-Za-z0-9._~-]+)+$/;

const RULES = {
  path: (value: unknown) => typeof value === 'string' && value.length <= 256 && PATH.test(value),
  guard: isFunction,
  allowUnauthenticated: isBoolean,
  imports: Array.isArray,
  refreshMs: integerIn(100, 60_000),
  maxRuns: integerIn(1, 1024),
  maxDenials: integerIn(1, 200),
  mayViewDenials: isFunction,
  mayViewTenants: isFunction,
  ...PRINCIPAL_OPTION_RULES,
};

/**
 * Validates the options: a broken rule or an unknown key gives `invalid_console_options`; no
 * `guard`, no `resolvePrincipal` and no `allowUnauthenticated: true` gives `console_guard_required`.
 */
export function resolveConsoleOptions(options: ConsoleModuleOptions): ResolvedConsoleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new ConsoleError('invalid_console_options', optionFailureDetails(read.fields));
  const values = read.values;
  if (values.path === undefined) throw new ConsoleError('invalid_console_options', { field: 'path' });
  const principals = new PrincipalGate(values);
  if (values.guard === undefined && values.resolvePrincipal === undefined && values.allowUnauthenticated !== true) throw new ConsoleError('console_guard_required');
  return Object.freeze({
    path: values.path as string,
    guard: values.guard as ConsoleGuard | undefined,
    principals,
    mayViewDenials: (values.mayViewDenials as ((principal: Principal) => boolean) | undefined) ?? (() => false),
    mayViewTenants: (values.mayViewTenants as ((principal: Principal) => boolean) | undefined) ?? (() => false),
    imports: (values.imports as ConsoleImports | undefined) ?? [],
    refreshMs: (values.refreshMs as number | undefined) ?? 1000,
    maxRuns: (values.maxRuns as number | undefined) ?? 50,
    maxDenials: (values.maxDenials as number | undefined) ?? 20,
  });
}
