/**
 * Every shell example of the README and docs/*.md, run against the reference service (`npm start`'s app)
 * on a fresh migrated database, with its output checked. How to write an example this test runs:
 *
 * - Write it as a ```console block. A line starting with `$ ` is a command (a line ending in `\` goes on
 *   on the next line); the lines under it, up to the next `$ ` line, are the output it shows. A command
 *   with no lines under it is run, its output not checked.
 * - Address the service as `localhost:3000`: the test puts the address of the service it started there.
 *   The commands of one block run in order in one bash, from the repository's root.
 * - The output shown must be the output, line for line (both ends trimmed), except that `…` stands for any
 *   text: an id, a timestamp, fields left out, or whole lines. So every field a JSON line shows is checked,
 *   in the order shown.
 * - To show the status, use `curl -si` and write the status line, then `…` for the headers:
 *   `HTTP/1.1 403 Forbidden`, `…`, then the body.
 * - A variable (`$RUN_ID`) must be assigned by an earlier command of the same block.
 * - `<!-- env: ADMISSION_OVERFLOW=reject -->` on the line above the block: its commands run against a service
 *   started with that environment.
 * - `<!-- instances: 3001=node-a 3002=node-b -->`: the block addresses several instances of a cluster
 *   (`CLUSTER=1 INSTANCE_ID=node-a PORT=3001 npm start`, …) as `localhost:3001`, `localhost:3002`; the test
 *   starts one reference service in cluster mode per instance, on one database.
 * - `<!-- not-run: why -->`: the block is not run (a restart, a killed process, a command-line tool); such
 *   blocks are listed by the first test.
 * - ```bash and ```sh blocks are never run: use them for install, start and build commands.
 */
import { RecordingLogger } from '../e2e/support/harness';
import { startReferenceService, type ReferenceService } from '../e2e/support/reference-service';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { consoleBlocks, envOf, instancesOf, outputMatches, runSteps, stepsOf, unassignedVariables, type DocBlock } from './support/shell-examples';

const blocks = consoleBlocks();
const name = (block: DocBlock) => `${block.file}:${block.line}`;
const runnable = blocks.filter((block) => block.markers['not-run'] === undefined);
/** The runnable blocks grouped by the services they need (`env` and `instances` markers), the plain ones first. */
const byServices = new Map<string, DocBlock[]>();
for (const block of runnable) {
  const key = [block.markers.env, block.markers.instances].filter(Boolean).join('; ') || 'one service';
  byServices.set(key, [...(byServices.get(key) ?? []), block]);
}

describe('the shell examples of the docs', () => {
  it('are found, and the ones not run say why', () => {
    expect(runnable.length).toBeGreaterThan(0);
    const skipped = blocks.filter((block) => block.markers['not-run'] !== undefined);
    for (const block of skipped) expect(`${name(block)}: ${block.markers['not-run']}`).toMatch(/: \S/);
    if (skipped.length) console.log(`console blocks not run:\n${skipped.map((block) => `  ${name(block)} (${block.markers['not-run']})`).join('\n')}`);
  });

  it.each(blocks.map((block) => [name(block), block] as const))('%s assigns every variable before a command uses it', (_, block) => {
    expect(unassignedVariables(stepsOf(block))).toEqual([]);
  });
});

describe.each([...byServices.entries()])('against the reference service (%s)', (_, group) => {
  const logger = new RecordingLogger();
  let database: FreshDatabase | undefined;
  const services: ReferenceService[] = [];
  const bases: Record<string, string> = {};

  beforeAll(async () => {
    database = await createFreshDatabase();
    const environment = envOf(group[0]);
    const saved = Object.fromEntries(Object.keys(environment).map((key) => [key, process.env[key]]));
    Object.assign(process.env, environment);
    try {
      for (const { port, instanceId } of instancesOf(group[0])) {
        const cluster = instanceId === null ? {} : { cluster: { instanceId } };
        const service = await startReferenceService({ databaseUrl: database.url, logDecisions: false, ...cluster }, logger);
        services.push(service);
        bases[port] = service.http.baseUrl;
      }
    } finally {
      for (const [key, value] of Object.entries(saved)) if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }, 120_000);

  afterAll(async () => {
    for (const service of services.reverse()) await service.app.close();
    await database?.drop();
  }, 60_000);

  it.each(group.map((block) => [name(block), block] as const))('%s shows what the service answers', async (_, block) => {
    const steps = stepsOf(block);
    const outputs = await runSteps(steps, bases, 25_000);
    const mismatches = steps
      .map((step, index) => ({ step, actual: outputs[index] }))
      .filter(({ step, actual }) => step.expected.some((line) => line.trim() !== '') && !outputMatches(step.expected, actual))
      .map(({ step, actual }) => `line ${step.line}: $ ${step.command}\n  shown:  ${step.expected.join('\n          ')}\n  actual: ${actual.trim().split('\n').join('\n          ')}`);
    expect(mismatches).toEqual([]);
  }, 30_000);
});
