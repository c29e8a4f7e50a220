import type { DynamicModule, FactoryProvider, InjectionToken, ModuleMetadata, Provider, Type } from '@nestjs/common';
import type { ErrorDetails } from '../errors/agent-runtime-error';
import { optionFailureDetails, readOptions, readOwnData, type OptionRules } from '../options/option-reader';
import { isFunction } from '../options/option-rules';

/**
 * Options of a module's `forRootAsync`: `imports`, `inject`, and exactly one of `useFactory`,
 * `useClass`, `useExisting`. `F` is the module's options-factory interface.
 */
export interface ModuleAsyncOptions<O, F> extends Pick<ModuleMetadata, 'imports'> {
  /** Providers handed to `useFactory`, in order. @default [] */
  inject?: FactoryProvider['inject'];
  /** Builds the options from the injected providers. */
  useFactory?: (...args: any[]) => O | Promise<O>;
  /** A class the module registers and asks for the options (its factory method). */
  useClass?: Type<F>;
  /** A provider already visible to the module (e.g. exported by `imports`) asked for the options. */
  useExisting?: Type<F>;
}

/** Values of the declaration-time options that passed their rules (`undefined` ones absent). */
export type DeclaredOptions<E extends string> = { readonly [P in E]?: unknown };

/** What a module tells {@link moduleBuilder}. */
export interface ModuleDefinition<E extends string> {
  /** The module class. */
  readonly module: Type;
  /** Token the (resolved) options are provided under. */
  readonly optionsToken: InjectionToken;
  /** Method of a `useClass`/`useExisting` factory that returns the options, e.g. `createAdmissionOptions`. */
  readonly factoryMethod: string;
  /**
   * Options needed when the module is declared (an injection token depends on them), with their
   * rules. They are read from the `forRoot` options, and from the `forRootAsync` options beside the
   * factory, whose result may repeat them but not change them; `resolve` gets the options without them.
   */
  readonly declared?: OptionRules<E>;
  /**
   * The one validation of the module's options (without the declared ones), run at bootstrap for
   * `forRoot` and `forRootAsync` alike; its result is what `optionsToken` provides. Throws the
   * module's error. @default hands the options on, for the component built from them to validate
   */
  readonly resolve?: (options: unknown) => unknown;
  /** The module's error for a `forRootAsync` declaration that cannot be built (details `{field}`/`{fields}`). */
  readonly invalid: (details: ErrorDetails) => Error;
  /** Imports, providers and exports of the module beside its options provider. */
  readonly metadata: (declared: DeclaredOptions<E>) => Pick<DynamicModule, 'imports' | 'providers' | 'exports'>;
}

/** `forRoot` and `forRootAsync` of a global module. */
export interface ModuleBuilder<O, F> {
  forRoot(options?: O): DynamicModule;
  forRootAsync(options: ModuleAsyncOptions<O, F>): DynamicModule;
}

const FACTORY_KEYS = ['useFactory', 'useClass', 'useExisting'] as const;

/**
 * The one way this package builds `forRoot`/`forRootAsync` of its global modules. Nest's
 * `ConfigurableModuleBuilder` is not used because it spreads the options it is given (running
 * getters and Proxy traps, copying unknown keys into its extras) and turns a `forRootAsync` without
 * a factory into an `undefined` provider; this reads every options object with the shared option
 * reader and refuses a bad declaration with the module's own error.
 *
 * @example
 * const builder = moduleBuilder({ module: AdmissionModule, optionsToken: ADMISSION_OPTIONS, ... });
 * AdmissionModule.forRootAsync = (options) => builder.forRootAsync(options);
 */
export function moduleBuilder<O, F, E extends string = never>(definition: ModuleDefinition<E>): ModuleBuilder<O, F> {
  const declaredRules = (definition.declared ?? {}) as OptionRules<E>;
  const declaredKeys = Object.keys(declaredRules) as E[];

  /** Declared options repeated in `options` must pass their rules and match; then they are left out. */
  const resolve = (options: unknown, declared: DeclaredOptions<E>): unknown => {
    if (declaredKeys.length > 0) {
      const read = readOptions(options, declaredRules, { name: 'options', unknownKeys: 'ignore' });
      if (!read.ok) throw definition.invalid(optionFailureDetails(read.fields));
      const changed = declaredKeys.filter((key) => key in read.values && read.values[key] !== declared[key]);
      if (changed.length > 0) throw definition.invalid(optionFailureDetails(changed));
    }
    const rest = withoutKeys(options, declaredKeys);
    return definition.resolve ? definition.resolve(rest) : rest;
  };

  const build = (optionProviders: Provider[], declared: DeclaredOptions<E>, imports: ModuleMetadata['imports'] = []): DynamicModule => {
    const rest = definition.metadata(declared);
    return {
      module: definition.module,
      global: true,
      imports: [...imports, ...(rest.imports ?? [])],
      providers: [...optionProviders, ...(rest.providers ?? [])],
      exports: rest.exports ?? [],
    };
  };

  return {
    forRoot(options?: O): DynamicModule {
      const read = readOptions(options, declaredRules, { name: 'options', unknownKeys: 'ignore' });
      // a declared option that breaks its rule is refused at bootstrap, by `resolve`
      const declared = read.ok ? read.values : {};
      return build([{ provide: definition.optionsToken, useFactory: () => resolve(options, declared) }], declared);
    },

    forRootAsync(options: ModuleAsyncOptions<O, F>): DynamicModule {
      const rules = { imports: Array.isArray, inject: Array.isArray, useFactory: isFunction, useClass: isFunction, useExisting: isFunction, ...declaredRules };
      const read = readOptions(options, rules, { name: 'forRootAsync', unknownKeys: 'refuse' });
      if (!read.ok) throw definition.invalid(optionFailureDetails(read.fields));
      const given = read.values as ModuleAsyncOptions<O, F> & DeclaredOptions<E>;
      const factories = FACTORY_KEYS.filter((key) => given[key] !== undefined);
      if (factories.length !== 1) throw definition.invalid(optionFailureDetails(factories.length === 0 ? ['forRootAsync'] : factories));
      const declared = Object.fromEntries(declaredKeys.filter((key) => key in given).map((key) => [key, given[key]])) as DeclaredOptions<E>;
      return build(asyncProviders(given, declared), declared, given.imports);
    },
  };

  function asyncProviders(given: ModuleAsyncOptions<O, F>, declared: DeclaredOptions<E>): Provider[] {
    const { useFactory, useClass } = given;
    if (useFactory) {
      return [{ provide: definition.optionsToken, inject: given.inject ?? [], useFactory: async (...args: unknown[]) => resolve(await useFactory(...args), declared) }];
    }
    const factoryClass = (useClass ?? given.useExisting) as Type<F>;
    const fromFactory: Provider = {
      provide: definition.optionsToken,
      inject: [factoryClass],
      useFactory: async (factory: Record<string, unknown>) => {
        const method = factory[definition.factoryMethod];
        if (typeof method !== 'function') throw definition.invalid({ field: definition.factoryMethod });
        return resolve(await method.call(factory), declared);
      },
    };
    return useClass ? [{ provide: useClass, useClass }, fromFactory] : [fromFactory];
  }
}

/**
 * `options` without the own keys named: a copy of the other own properties, descriptors and all,
 * so accessors stay uncalled for the module's reader to refuse. Anything the shared reader cannot
 * read (not a plain object, a Proxy) is handed on unchanged, for the module's reader to refuse.
 */
function withoutKeys(options: unknown, keys: readonly string[]): unknown {
  if (keys.length === 0) return options;
  const own = readOwnData(options, keys);
  if (own === null || !keys.some((key) => key in own.values || own.accessors.includes(key))) return options;
  // a plain, non-Proxy object: reading its descriptors runs none of its code
  const source = options as object;
  const copy = Object.create(Object.getPrototypeOf(source) as object | null) as object;
  for (const key of Reflect.ownKeys(source)) {
    if (typeof key === 'string' && keys.includes(key)) continue;
    Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(source, key) as PropertyDescriptor);
  }
  return copy;
}
