/**
 * The public API, entry point by entry point: the names (values and types) each one exports, read from
 * the sources with the TypeScript compiler the way a consumer's compiler reads the declarations. A name
 * that appears or disappears fails the snapshot, so a leak of an internal or the removal of a public name
 * is a deliberate change (`npx jest test/public-api.spec.ts -u`, then review the diff of the snapshot).
 * The README's table of entry points gives the same counts.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');

interface ExportTarget {
  readonly types: string;
  readonly default: string;
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, ExportTarget | string>;
  typesVersions: Record<string, Record<string, string[]>>;
};

/** `nest-agent-runtime/<subpath>` → its source entry file, from package.json's `exports`. */
const ENTRY_POINTS: ReadonlyArray<readonly [string, string]> = Object.entries(manifest.exports)
  .filter((entry): entry is [string, ExportTarget] => typeof entry[1] === 'object')
  .map(([subpath, target]) => [subpath === '.' ? 'nest-agent-runtime' : `nest-agent-runtime/${subpath.slice(2)}`, target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')] as const);

/** The exported names of each entry point, split into values (anything that exists at run time) and types. */
function publicApi(): Record<string, { values: string[]; types: string[] }> {
  const program = ts.createProgram(
    ENTRY_POINTS.map(([, file]) => path.join(ROOT, file)),
    { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, strict: true, experimentalDecorators: true, skipLibCheck: true, noEmit: true, types: ['node'] },
  );
  const checker = program.getTypeChecker();
  const api: Record<string, { values: string[]; types: string[] }> = {};
  for (const [name, file] of ENTRY_POINTS) {
    const source = program.getSourceFile(path.join(ROOT, file));
    if (!source) throw new Error(`entry point ${name} has no source ${file}`);
    const moduleSymbol = checker.getSymbolAtLocation(source) as ts.Symbol;
    const values: string[] = [];
    const types: string[] = [];
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const typeOnly = exported.declarations?.some((declaration) => ts.isTypeOnlyExportDeclaration(declaration) || (ts.isExportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly)));
      (target.flags & ts.SymbolFlags.Value && !typeOnly ? values : types).push(exported.name);
    }
    api[name] = { values: values.sort(), types: types.sort() };
  }
  return api;
}

describe('public API', () => {
  const api = publicApi();

  it('each entry point exports exactly its public names', () => {
    expect(api).toMatchSnapshot();
  });

  it('the README gives the count of names each entry point exports', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `(nest-agent-runtime[^`]*)` \| (\d+) \| (\d+) \|/gm)].map(([, name, values, types]) => [name, { values: Number(values), types: Number(types) }] as const);
    const counts = Object.fromEntries(Object.entries(api).map(([name, { values, types }]) => [name, { values: values.length, types: types.length }]));
    expect(Object.fromEntries(rows)).toEqual(counts);
  });

  it('keeps internals out of every entry point: table specs, the schema catalog, SQL, lock keys, the embedded-Postgres launcher', () => {
    const internal = /TABLE_SPEC|TableSpec|^defineTableSpec$|^validateSchema$|^assertSchema$|fingerprintFunction|isPostgresIdentifier|Sql$|SQL|LockKey|^startEmbeddedPostgres$|^openProjectDatabase$|^AuditRecorder$|^GENESIS_HASH$|^MIGRATIONS_TABLE$/;
    const leaked = Object.entries(api).flatMap(([name, { values, types }]) => [...values, ...types].filter((exported) => internal.test(exported)).map((exported) => `${name}: ${exported}`));
    expect(leaked).toEqual([]);
  });

  it('names the telemetry events as the spec does', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { TelemetryEvents } = require('../src/telemetry/telemetry-events') as typeof import('../src/telemetry/telemetry-events');
    expect(TelemetryEvents).toMatchObject({ admissionDecision: 'agent_runtime.admission.decision', policyDecision: 'agent_runtime.policy.decision' });
  });

  it('package.json maps every entry point to its built file and declarations, and typesVersions agrees for older resolvers', () => {
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (typeof target === 'string') continue;
      expect(target.types).toBe(target.default.replace(/\.js$/, '.d.ts'));
      if (subpath !== '.') expect(manifest.typesVersions['*'][subpath.slice(2)]).toEqual([target.types.slice(2)]);
    }
  });
});
