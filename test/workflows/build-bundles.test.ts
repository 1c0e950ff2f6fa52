import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_BUNDLE_FILE, currentCliBundle, currentWorkflowBundle, WORKFLOW_BUNDLE_FILE } from '../../workers/build-bundles.ts';

describe("the build's bundles", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A build root with the workflows' bundle at `bundled` and modules at `modules` (seconds since the epoch). */
  const build = (bundled: number | null, modules: Record<string, number>, bundleFile = WORKFLOW_BUNDLE_FILE) => {
    const root = mkdtempSync(join(tmpdir(), 'build-bundles-'));
    roots.push(root);
    const write = (path: string, at: number) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), at, at);
    };
    for (const [path, at] of Object.entries({
      'workflows/index.js': 1000,
      'src/a.js': 1000,
      'workers/runtime.js': 1000,
      'activities/index.js': 1000,
      ...modules,
    }))
      write(path, at);
    if (bundled !== null) write(bundleFile, bundled);
    return root;
  };

  it("the workflows' bundle is used while no compiled module of the workflows or of src/ is newer: after `npm run build`, or installed with one time for every file", () => {
    const built = build(2000, { 'src/deep/b.js': 1500 });
    expect(currentWorkflowBundle(built)).toBe(join(built, WORKFLOW_BUNDLE_FILE));
    const installed = build(1000, {});
    expect(currentWorkflowBundle(installed)).toBe(join(installed, WORKFLOW_BUNDLE_FILE));
  });

  it("the workflows' bundle is passed over when a module was compiled after it (a `tsc -b` without the bundling step), or when there is none", () => {
    expect(currentWorkflowBundle(build(2000, { 'src/deep/b.js': 2001 }))).toBeUndefined();
    expect(currentWorkflowBundle(build(2000, { 'workflows/synthesis-pass.js': 2001 }))).toBeUndefined();
    expect(currentWorkflowBundle(build(null, {}))).toBeUndefined();
  });

  it('freshness ignores what is not a compiled module (declarations, copied assets)', () => {
    const root = build(2000, { 'src/a.d.ts': 3000, 'src/demo/sample-runs.jsonl': 3000 });
    expect(currentWorkflowBundle(root)).toBe(join(root, WORKFLOW_BUNDLE_FILE));
  });

  it("the CLI's bundle is current only while no module it composes is newer: a module of workers/ or activities/ counts too", () => {
    const built = build(2000, { 'workers/runtime.js': 1500 }, CLI_BUNDLE_FILE);
    expect(currentCliBundle(built)).toBe(join(built, CLI_BUNDLE_FILE));
    expect(currentCliBundle(build(2000, { 'activities/index.js': 2001 }, CLI_BUNDLE_FILE))).toBeUndefined();
    expect(currentCliBundle(build(2000, { 'workers/runtime.js': 2001 }, CLI_BUNDLE_FILE))).toBeUndefined();
    // The workflows' bundle is not the CLI's: each is current or stale on its own.
    expect(currentCliBundle(build(2000, {}))).toBeUndefined();
  });
});
