/**
 * Architecture rules checked by test/architecture/dependencies.test.ts: no import cycle between
 * files or between folders; `src/` (domain and interfaces) never reaches into the Temporal layer
 * (`workflows/`, `activities/`, `workers/`); the folders of `src/` are layers, and a folder imports
 * only folders of the layers below it; workflows import only the contracts; an activity module
 * imports no other step's activities.
 */

/**
 * The layers of `src/`, top first. Folders on one line are siblings: they import neither each
 * other nor anything above them.
 */
const SRC_LAYERS = [
  ['index.ts', 'cli'], // the package's entry points
  ['api'],
  ['app'], // the composition root and the whole configuration
  ['metrics', 'eval', 'client', 'demo'],
  ['review'],
  ['synthesis'],
  ['authoring', 'sessions', 'recall', 'traces'],
  ['rollout', 'procedures'],
  ['clustering'],
  ['runs', 'embedding', 'llm'],
  ['infra'],
  ['store'],
  ['skills'],
  ['contracts', 'input', 'logging'],
  ['errors'],
];

const pathOf = (entries) => `^src/(${entries.map((entry) => entry.replace('.', '\\.')).join('|')})(/|$)`;

const layerRules = SRC_LAYERS.map((layer, index) => ({
  name: `layer-${layer.join('-').replace('.ts', '')}`,
  comment: `src/${layer.join(', src/')} imports only the layers below it (.dependency-cruiser.cjs SRC_LAYERS).`,
  severity: 'error',
  from: { path: pathOf(layer) },
  to: {
    path: pathOf(SRC_LAYERS.slice(0, index + 1).flat()),
    // A folder's own files import each other.
    pathNot: '^src/$1/',
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-file-cycle',
      comment: 'Two modules that import each other cannot be understood or tested apart.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'Folders are layers: a folder that depends on another must not be depended on by it.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-temporal-layer',
      comment: 'src/ is the domain and its interfaces; the Temporal workflows, activities and workers depend on it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(workflows|activities|workers)/' },
    },
    {
      name: 'src-folder-layers-known',
      comment: 'Every folder of src/ has its place in SRC_LAYERS.',
      severity: 'error',
      from: { path: '^src/', pathNot: pathOf(SRC_LAYERS.flat()) },
      to: {},
    },
    ...layerRules,
    {
      name: 'workflows-import-contracts',
      comment:
        'Workflow code is bundled and replayed: it imports the contracts in src/contracts/ and activity types, nothing else of src/.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^src/', pathNot: '^src/contracts/' },
    },
    {
      name: 'activities-one-step-each',
      comment: "An activity module is one step: it imports the shared plumbing, never another step's activities.",
      severity: 'error',
      from: { path: '^activities/', pathNot: '^activities/index\\.ts$' },
      to: { path: '^activities/', pathNot: '^activities/(dependencies|failures|heartbeat)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|bench)/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
