import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first (as the whole suite last measured them; the figures
 * are in bench/results/). With three forks the suite ends when its last file does: a long file
 * started last would run alone at the end, so these start first (a fresh clone has no timing
 * cache, and vitest would otherwise order by file size).
 */
const SLOWEST_FILES = [
  'test/e2e/durability.test.ts',
  'test/e2e/synthesis-cli.test.ts',
  'test/sessions/sessions.store.test.ts',
  'test/workflows/synthesis-pass.test.ts',
  'test/e2e/demo-cli.test.ts',
  'test/e2e/stack.test.ts',
  'test/e2e/eval-cli.test.ts',
  'test/package/installed-package.test.ts',
  'test/workflows/intake-review.test.ts',
  'test/clustering/partition-equality.test.ts',
  'test/workflows/reconcile-by-procedure.test.ts',
  'test/skills/skills-cli.store.test.ts',
  'test/workflows/stack-check.test.ts',
];

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const index = SLOWEST_FILES.findIndex((file) => spec.moduleId.endsWith(file));
      return index < 0 ? SLOWEST_FILES.length : index;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((spec, position) => ({ spec, position }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.position - b.position)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite (servers killed, outages of a minute and more) runs on its own: `npm run faults`.
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/embedding-runtime.ts'],
    pool: 'forks',
    // Two cores, but files wait on Temporal timers and child processes much of the time: three at
    // once finish sooner than two or four (bench/results/), the slowest test still far from its timeout.
    // The forks live for the whole run (minForks = maxForks): tinypool ends a fork that falls idle while
    // more forks than minForks exist, and with isolate off that ending raced a fork still loading its
    // next file — "Terminating worker thread", vitest exiting 1 before its summary, an orphaned fork.
    poolOptions: { forks: { maxForks: 3, minForks: 3 } },
    // Each fork runs file after file with its module graph kept: a file no longer pays for a process
    // and for importing vitest, Temporal's SDK, PGlite, onnxruntime and the token encoder again (a
    // model, once loaded, stays loaded). Safe because no test file changes process.env, mocks a module or installs
    // fake timers, and the process-wide state in src/ (the loaded models, the token counts, the
    // Temporal SDK runtime installed once by workers/worker.ts) is the same for every file.
    isolate: false,
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
