import { statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { PASS_SEARCH_ATTRIBUTE_TYPES } from '../../src/contracts/search-attributes.ts';
import { startEmbeddedPostgres } from '../../src/infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../../src/infra/temporal-dev-server.ts';
import { createPool } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrations.ts';
import { currentWorkflowBundle, newestModule } from '../../workers/build-bundles.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    /** The workflows bundled once for the whole run (workflowsPath): a worker bundling them itself spends seconds of CPU. */
    workflowBundlePath: string;
    /** A migrated PGlite data directory (a tarball) each file's test database starts from: initdb and migrating once per run, not per file. */
    databaseTemplatePath: string;
  }
}

/**
 * One real Temporal dev server for the whole run (headless, in memory), unless TEMPORAL_ADDRESS
 * names one already running (CI and `skillsmith up` users); and, made once while it starts, what
 * every file would otherwise make again: the workflow bundle and a migrated database to copy.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = await mkdtemp(join(tmpdir(), 'skillsmith-test-run-'));
  const removeScratch = () => rm(scratch, { recursive: true, force: true });
  const prepared = Promise.all([bundleWorkflows(scratch), dumpMigratedDatabase(scratch)]);
  prepared.catch(() => undefined);
  const providePrepared = async () => {
    const [bundlePath, templatePath] = await prepared;
    project.provide('workflowBundlePath', bundlePath);
    project.provide('databaseTemplatePath', templatePath);
  };
  const external = process.env.TEMPORAL_ADDRESS;
  if (external) {
    await providePrepared().catch(async (error: unknown) => {
      await removeScratch();
      throw error;
    });
    project.provide('temporalAddress', external);
    return removeScratch;
  }
  const starting = startTemporalDevServer({
    home: process.env.SKILLSMITH_HOME ?? '.skillsmith',
    cliPath: process.env.TEMPORAL_CLI_PATH,
    uiPort: false,
    searchAttributes: PASS_SEARCH_ATTRIBUTE_TYPES,
    onProgress: (message) => process.stderr.write(`[temporal] ${message}\n`),
  });
  const [started, provided] = await Promise.allSettled([starting, providePrepared()]);
  if (started.status === 'rejected' || provided.status === 'rejected') {
    if (started.status === 'fulfilled') await started.value.stop();
    await removeScratch();
    throw started.status === 'rejected' ? started.reason : (provided as PromiseRejectedResult).reason;
  }
  project.provide('temporalAddress', started.value.address);
  return async () => {
    await started.value.stop();
    await removeScratch();
  };
}

/**
 * A PGlite database migrated to the current schema, dumped into `directory` (test/support/database.ts
 * starts from it). Every file's start unpacks the whole dump, so it holds no more than a test uses:
 * 1 MB WAL segments, and no template0 / template1 (nothing runs CREATE DATABASE on PGlite). 42 → 17 MB,
 * a start from it 0.99–1.10 → 0.64–0.70 s of CPU (10 starts, paired).
 */
async function dumpMigratedDatabase(directory: string): Promise<string> {
  const embedded = await startEmbeddedPostgres({ walSegmentSizeMb: 1 });
  try {
    const pool = createPool(embedded.url);
    try {
      await migrate(pool);
      await pool.query(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`);
      await pool.query('DROP DATABASE template0');
      await pool.query('DROP DATABASE template1');
    } finally {
      await pool.end();
    }
    const path = join(directory, 'migrated-database.tar');
    await writeFile(path, Buffer.from(await (await embedded.dump()).arrayBuffer()));
    return path;
  } finally {
    await embedded.stop();
  }
}

/**
 * The workflows as every worker of the run loads them (workers/worker.ts's workflowsPath): the build's
 * bundle while it is current — newer than every compiled module and every source they were compiled
 * from, as after `npm test`'s own build (3.1–3.4 s of CPU not spent bundling again) — else bundled
 * once into `directory` from the sources.
 */
async function bundleWorkflows(directory: string): Promise<string> {
  const built = builtWorkflowBundle();
  if (built) return built;
  // Not imported from workers/worker.ts: that would load every activity's dependencies here.
  const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
  const path = join(directory, 'workflow-bundle.js');
  await writeFile(path, code);
  return path;
}

/** dist/'s workflow bundle when no source of workflows/ or src/ changed after it was made, else undefined. */
function builtWorkflowBundle(): string | undefined {
  const repository = fileURLToPath(new URL('../../', import.meta.url));
  try {
    const built = currentWorkflowBundle(join(repository, 'dist'));
    if (!built) return undefined;
    const newestSource = Math.max(...['workflows', 'src'].map((directory) => newestModule(join(repository, directory), '.ts')));
    return newestSource <= statSync(built).mtimeMs ? built : undefined;
  } catch {
    // No build (or a partial one): bundle from the sources.
    return undefined;
  }
}
