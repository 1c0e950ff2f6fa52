import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Where the build writes the workflows' bundle (scripts/bundle-workflows.js), relative to the build's root. */
export const WORKFLOW_BUNDLE_FILE = join('workflows', 'workflow-bundle.js');

/** Newest modification time of the compiled modules under `directory`; 0 when there are none. */
function newestModule(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestModule(path));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The build's bundle of the workflows under `root` (dist/) when it is newer than every compiled
 * module of workflows/ and of src/ they import (itself among them), else undefined: a `tsc -b` without the bundling
 * step leaves it stale, and a worker loading it would run workflow code older than its activities.
 */
export function currentWorkflowBundle(root: string): string | undefined {
  const bundlePath = join(root, WORKFLOW_BUNDLE_FILE);
  let bundled: number;
  try {
    bundled = statSync(bundlePath).mtimeMs;
  } catch {
    return undefined;
  }
  const newest = Math.max(...['workflows', 'src'].map((directory) => newestModule(join(root, directory))));
  return newest <= bundled ? bundlePath : undefined;
}
