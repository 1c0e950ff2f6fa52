/**
 * Architecture rules checked by test/architecture/dependencies.test.ts:
 * no import cycle between files or between folders, and `src/` (domain and interfaces)
 * never reaches into the Temporal layer (`workflows/`, `activities/`, `workers/`).
 * @type {import('dependency-cruiser').IConfiguration}
 */
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|bench)/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
