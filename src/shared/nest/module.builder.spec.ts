import { Module, type FactoryProvider } from '@nestjs/common';
import { AgentRuntimeError, type ErrorDetails } from '../errors/agent-runtime-error';
import { moduleBuilder } from './module.builder';
import { isNonEmptyString } from '../options/option-rules';

class TestError extends AgentRuntimeError<'invalid_test_options'> {
  constructor(details?: ErrorDetails) {
    super('TestError', 'invalid_test_options', details);
  }
}

@Module({})
class TestModule {}

const TOKEN = Symbol('TEST_OPTIONS');
const resolved: unknown[] = [];
const builder = moduleBuilder<Record<string, unknown>, { createTestOptions(): unknown }, 'name'>({
  module: TestModule,
  optionsToken: TOKEN,
  factoryMethod: 'createTestOptions',
  declared: { name: isNonEmptyString },
  resolve: (options) => {
    resolved.push(options);
    return options;
  },
  invalid: (details) => new TestError(details),
  metadata: (declared) => ({ providers: [{ provide: 'declared', useValue: declared.name ?? null }], exports: [TOKEN] }),
});

const optionsFactory = (module: ReturnType<typeof builder.forRoot>) =>
  (module.providers ?? []).find((provider) => typeof provider === 'object' && 'provide' in provider && provider.provide === TOKEN) as FactoryProvider;

describe('moduleBuilder', () => {
  beforeEach(() => resolved.splice(0));

  it('builds a global module whose options provider resolves what forRoot was given, declared keys left out', async () => {
    const module = builder.forRoot({ name: 'db', size: 2 });
    expect(module).toMatchObject({ module: TestModule, global: true, exports: [TOKEN] });
    expect(module.providers).toContainEqual({ provide: 'declared', useValue: 'db' });
    expect(await optionsFactory(module).useFactory()).toEqual({ size: 2 });
  });

  it('never calls a getter: an accessor is handed on as an accessor for the module to refuse', async () => {
    const getter = jest.fn(() => 1);
    const options = Object.defineProperty({ name: 'db' }, 'size', { get: getter, enumerable: true });
    await optionsFactory(builder.forRoot(options)).useFactory();
    const handedOn = resolved[0] as object;
    expect(Object.getOwnPropertyDescriptor(handedOn, 'size')?.get).toBe(getter);
    expect(getter).not.toHaveBeenCalled();
  });

  it('refuses at bootstrap a forRoot whose declared option breaks its rule', async () => {
    expect(() => optionsFactory(builder.forRoot({ name: '' })).useFactory()).toThrow(expect.objectContaining({ code: 'invalid_test_options', details: { field: 'name' } }));
  });

  it('forRootAsync: the factory result may repeat a declared option but not change it', async () => {
    const same = builder.forRootAsync({ name: 'db', useFactory: () => ({ name: 'db', size: 1 }) } as never);
    expect(await optionsFactory(same).useFactory()).toEqual({ size: 1 });
    const changed = builder.forRootAsync({ name: 'db', useFactory: () => ({ name: 'other' }) } as never);
    await expect(optionsFactory(changed).useFactory()).rejects.toMatchObject({ code: 'invalid_test_options', details: { field: 'name' } });
  });

  it('forRootAsync with useClass registers the class and asks its factory method', async () => {
    class Factory {
      createTestOptions() {
        return { size: 3 };
      }
    }
    const module = builder.forRootAsync({ useClass: Factory });
    expect(module.providers).toContainEqual({ provide: Factory, useClass: Factory });
    expect(await optionsFactory(module).useFactory(new Factory())).toEqual({ size: 3 });
    await expect(optionsFactory(module).useFactory({})).rejects.toMatchObject({ details: { field: 'createTestOptions' } });
  });

  it.each<[string, unknown, ErrorDetails]>([
    ['no factory', {}, { field: 'forRootAsync' }],
    ['two factories', { useFactory: () => ({}), useExisting: class {} }, { fields: ['useExisting', 'useFactory'] }],
    ['a Proxy', new Proxy({ useFactory: () => ({}) }, {}), { field: 'forRootAsync' }],
    ['a getter for the factory', Object.defineProperty({}, 'useFactory', { get: () => () => ({}), enumerable: true }), { field: 'useFactory' }],
    ['imports that are not a list', { imports: 'x', useFactory: () => ({}) }, { field: 'imports' }],
  ])('forRootAsync with %s is refused when declared', (_name, options, details) => {
    expect(() => builder.forRootAsync(options as never)).toThrow(expect.objectContaining({ code: 'invalid_test_options', details }));
  });
});
