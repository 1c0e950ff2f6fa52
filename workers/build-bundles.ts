import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Where the build writes the workflows' bundle (scripts/bundle-workflows.js), relative to the build's root. */
export const WORKFLOW_BUNDLE_FILE = join('workflows', 'workflow-bundle.js');

/** Where the build writes the CLI's bundle (scripts/bundle-cli.js), relative to the build's root. */
export const CLI_BUNDLE_FILE = join('cli', 'skillsmith.js');

/** Newest modification time of the modules under `directory` (compiled `.js`, or `.ts` sources); 0 when there are none. */
export function newestModule(directory: string, extension: '.js' | '.ts' = '.js'): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestModule(path, extension));
    else if (entry.name.endsWith(extension)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The bundle at `file` under `root` (dist/) when it is newer than every compiled module of
 * `directories` it was made from, else undefined: a `tsc -b` without the bundling steps leaves it
 * stale, and code loaded from it would be older than the modules beside it. Installed from the
 * package, every file has one time, and the bundle counts as current.
 */
function currentBundle(root: string, file: string, directories: readonly string[]): string | undefined {
  const bundlePath = join(root, file);
  let bundled: number;
  try {
    bundled = statSync(bundlePath).mtimeMs;
  } catch {
    return undefined;
  }
  const newest = Math.max(...directories.map((directory) => newestModule(join(root, directory))));
  return newest <= bundled ? bundlePath : undefined;
}

/** The build's bundle of the workflows, while current (of workflows/ and the src/ modules they import). */
export function currentWorkflowBundle(root: string): string | undefined {
  return currentBundle(root, WORKFLOW_BUNDLE_FILE, ['workflows', 'src']);
}

/** The build's bundle of the CLI, while current (of everything it composes: src/, workers/, activities/, workflows/). */
export function currentCliBundle(root: string): string | undefined {
  return currentBundle(root, CLI_BUNDLE_FILE, ['src', 'workers', 'activities', 'workflows']);
}
