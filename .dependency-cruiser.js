/**
 * The rules of the house (docs/architecture.md), checked by `npm run lint:deps` in `.ci/run`:
 * - no cycle between module folders, because imports between them only go down the layers below;
 * - a core file (no Nest role suffix) never imports `@nestjs/*`;
 * - `src` never imports `test`.
 */

/**
 * The layers, lowest first. A file may import its own folder and any folder of a lower layer; folders
 * of one layer never import each other. So every import between module folders goes down, and no cycle
 * between them can exist: a cycle needs one import that goes up or sideways, which these rules refuse.
 * (Subfolders of one module, such as `runner/loop` and `runner/invocation`, are that module's own business.)
 */
const LAYERS = [
  ['shared/testing'],
  ['shared/errors', 'shared/text', 'shared/ids', 'shared/time', 'shared/async', 'shared/collections'],
  ['shared/options'],
  ['shared/nest'],
  ['json', 'telemetry'],
  ['http', 'health'],
  ['database'],
  ['cluster'],
  ['admission', 'policy', 'ledger', 'trace'],
  ['runner'],
  ['services'],
  ['evaluation'],
  ['observability'],
  ['adapters', 'testing'],
  ['reference-app', 'cli'],
];

/** Nest role suffixes: the only files that may import `@nestjs/*` (Nest's own file naming, plus `.health` for terminus indicators). */
const NEST_WRAPPER = String.raw`\.(module|guard|interceptor|decorator|controller|health|filter|pipe|service|provider|providers|dto|listener|builder)\.ts$`;

const folderPattern = (names) => `^src/(${names.join('|')})/`;

/** For each layer: its folders may not import a folder of any higher layer, nor another folder of their own layer. */
const layerRules = LAYERS.flatMap((layer, index) => {
  const higher = LAYERS.slice(index + 1).flat();
  const rules = [];
  if (higher.length > 0) {
    rules.push({
      name: `layer-${layer.join('-')}`,
      comment: `${layer.join(', ')} may not import a higher layer (${higher.join(', ')})`,
      severity: 'error',
      from: { path: folderPattern(layer) },
      to: { path: folderPattern(higher) },
    });
  }
  for (const folder of layer) {
    const siblings = layer.filter((other) => other !== folder);
    if (siblings.length === 0) continue;
    rules.push({
      name: `sibling-${folder}`,
      comment: `${folder} may not import ${siblings.join(', ')}: folders of one layer are independent`,
      severity: 'error',
      from: { path: `^src/${folder}/` },
      to: { path: folderPattern(siblings) },
    });
  }
  return rules;
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'kernel-and-modules-below-the-root',
      comment: 'Only the root entry point and main.ts import the package root or the reference app.',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/(index|main)\\.ts$' },
    },
    ...layerRules,
    {
      name: 'core-without-nest',
      comment: 'A core file (no Nest role suffix) imports nothing from @nestjs: cores are testable without Nest.',
      severity: 'error',
      from: { path: '^src/', pathNot: [NEST_WRAPPER, '\\.spec\\.ts$', '^src/reference-app/', '^src/main\\.ts$'] },
      to: { path: '^@nestjs/|node_modules/@nestjs/' },
    },
    {
      name: 'src-not-test',
      comment: 'Source never imports the test folder.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default', 'types'], mainFields: ['main', 'types'] },
  },
};
