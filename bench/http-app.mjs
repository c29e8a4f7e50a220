// Fixture of bench/http.bench.mjs: a Nest app (express platform) with the routes that answer the
// same small JSON body. Started by the benchmark as a child process (`fork`), so its CPU time can be
// read from /proc/<pid>/stat alone; it reports its port over IPC and exits on 'stop'.
//
// Environment: BENCH_DIST (the compiled library, default ../dist) and, for the profiler, whatever
// node flags the parent passes (e.g. --cpu-prof, written when the process exits).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, process.env.BENCH_DIST ?? '../dist');

require('reflect-metadata');
const { Controller, Get, Injectable, Module, UseGuards, UseInterceptors } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { Admission, AdmissionModule, AgentEndpoint, RuntimePolicyModule } = require(path.join(dist, 'src/index.js'));

/** What every route answers. */
const BODY = Object.freeze({ ok: true, n: 1 });

/** Nest's own cost of any guarded route: one guard and one interceptor that do nothing. */
class NoopGuard {
  canActivate() {
    return true;
  }
}
Injectable()(NoopGuard);

class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(NoopInterceptor);

/** A second one: the route shape of `@Admission` + `@AgentEndpoint` (one guard, two interceptors). */
class SecondNoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(SecondNoopInterceptor);

class BenchController {
  bare() {
    return BODY;
  }
  noop() {
    return BODY;
  }
  noop2() {
    return BODY;
  }
  admission() {
    return BODY;
  }
  admissionPolicy() {
    return BODY;
  }
}
const decorate = (name, ...decorators) => {
  const proto = BenchController.prototype;
  Reflect.decorate(decorators, proto, name, Object.getOwnPropertyDescriptor(proto, name));
};
decorate('bare', Get('bare'));
decorate('noop', Get('noop'), UseGuards(NoopGuard), UseInterceptors(NoopInterceptor));
decorate('noop2', Get('noop2'), UseGuards(NoopGuard), UseInterceptors(NoopInterceptor, SecondNoopInterceptor));
decorate('admission', Get('admission'), Admission('bench'));
decorate('admissionPolicy', Get('admission-policy'), Admission('bench'), AgentEndpoint({ agent: 'bench' }));
Controller()(BenchController);

/** Limits high enough never to queue; allow-all for agent `bench`, no audit sink. */
const LIMIT = 100_000;
class BenchModule {}
Module({
  imports: [
    AdmissionModule.forRoot({ globalLimit: LIMIT, defaultAgentLimit: LIMIT, overflow: 'reject', maxQueue: 1 }),
    RuntimePolicyModule.forRoot({ policy: { id: 'bench-policy', agents: { allow: ['bench'] } } }),
  ],
  controllers: [BenchController],
  providers: [NoopGuard, NoopInterceptor, SecondNoopInterceptor],
})(BenchModule);

const app = await NestFactory.create(BenchModule, { logger: ['error'] });
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
const admission = app.get(require(path.join(dist, 'src/index.js')).AdmissionController);
process.on('message', async (message) => {
  if (message === 'status') process.send({ status: admission.status() });
  if (message === 'stop') {
    await app.close();
    process.exit(0);
  }
});
process.send({ port });
