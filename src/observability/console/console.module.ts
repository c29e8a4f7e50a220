import { Controller, type DynamicModule, Inject, Logger, Module, type ModuleMetadata, type OnModuleInit, UseGuards } from '@nestjs/common';
import { ConsoleController } from './console.controller';
import { CONSOLE_OPTIONS, resolveConsoleOptions, type ConsoleModuleOptions, type ResolvedConsoleOptions } from './console-options';
import { ConsoleSnapshotService } from './console-snapshot.service';
import { ConsoleViewerGuard } from './console-viewer.guard';

/**
 * The operator console (one HTML page, its script and style, one snapshot stream) at `path`. It
 * reads the modules the application already has: admission, runs and their confirmations (the run
 * routes act on them), policy denials and the audit chain, evaluations and traces (through their
 * own routes, which the page calls). The application protects it with its own `guard` or its
 * `resolvePrincipal` (then each viewer sees only the runs and confirmations `RunsModule`'s
 * `authorizeRun` lets them see); without either `forRoot` throws `ConsoleError('console_guard_required')`
 * unless `allowUnauthenticated: true` is given explicitly, and then a console served without a guard
 * says so in a warning at start-up.
 * Bad options throw `invalid_console_options` (`{field}` or `{fields}`).
 *
 * @example
 * ConsoleModule.forRoot({ path: '/console', guard: OperatorGuard, imports: [AuthModule] })
 */
@Module({})
export class ConsoleModule implements OnModuleInit {
  constructor(@Inject(CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions) {}

  onModuleInit(): void {
    if (!this.options.guard && !this.options.principals.enabled) new Logger('ConsoleModule').warn(`operator console at ${this.options.path} is served WITHOUT a guard (allowUnauthenticated: true)`);
  }

  static forRoot(options: ConsoleModuleOptions): DynamicModule {
    const resolved = resolveConsoleOptions(options);
    // one subclass per mount: the route path and the guard are class metadata
    class MountedConsoleController extends ConsoleController {}
    Controller(resolved.path)(MountedConsoleController);
    UseGuards(...(resolved.guard ? [resolved.guard] : []), ConsoleViewerGuard)(MountedConsoleController);
    return {
      module: ConsoleModule,
      imports: [...resolved.imports] as ModuleMetadata['imports'],
      controllers: [MountedConsoleController],
      providers: [{ provide: CONSOLE_OPTIONS, useValue: resolved }, ConsoleSnapshotService, ConsoleViewerGuard],
    };
  }
}
