import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
// Only what a fresh shell has: no npm_config_* or loader flags inherited from the test run.
const env = { PATH: process.env.PATH, HOME: process.env.HOME };

/**
 * The package as npm publishes it, installed into an empty project and used with plain Node.
 * It packs the build in dist/ as it is (`npm test` builds first; packing with scripts would
 * rebuild dist/ under the CLI tests running beside this one). The project's dependencies come
 * from a hard-linked copy of this checkout's node_modules, so the install is offline and fast;
 * npm prunes from it everything the package does not declare (the devDependencies: TypeScript,
 * tsx, vitest), so an undeclared runtime dependency fails here too.
 */
describe('the packed package', () => {
  let directory: string;
  let project: string;
  let packedFiles: string[];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'skillsmith-package-'));
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', directory], {
      cwd: repositoryRoot,
      env,
    });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    packedFiles = packed!.files.map((file) => file.path);

    project = join(directory, 'project');
    await mkdir(project);
    // cp -a keeps node_modules' symlinks; -l hard-links the files instead of copying 700 MB. The
    // hidden lockfile goes: npm rewrites that file in place, and its inode is this checkout's.
    await run('cp', ['-al', join(repositoryRoot, 'node_modules'), join(project, 'node_modules')]);
    await rm(join(project, 'node_modules', '.package-lock.json'), { force: true });
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--ignore-scripts',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        join(directory, packed!.filename),
      ],
      { cwd: project, env },
    );
  }, 120_000);

  afterAll(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('ships the build, its declarations and the files read at run time, and no TypeScript sources', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'bin/skillsmith.js',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/workflows/index.js',
        'dist/schema/001_skills.sql',
        'dist/src/demo/sample-runs.jsonl',
      ]),
    );
    expect(packedFiles.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
    expect(packedFiles.filter((path) => path.startsWith('test/') || path.startsWith('src/'))).toEqual([]);
  });

  it('imports with plain Node and without the devDependencies', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '-e',
        `import('skillsmith').then((m) => console.log(JSON.stringify({
          reportRunCompleted: typeof m.reportRunCompleted,
          startSynthesisPass: typeof m.startSynthesisPass,
          parsed: m.parseRunReport({}).success,
        })))`,
      ],
      { cwd: project, env },
    );
    expect(JSON.parse(stdout)).toMatchObject({ reportRunCompleted: 'function', startSynthesisPass: 'function', parsed: false });
    await expect(run(process.execPath, ['-e', "import('typescript')"], { cwd: project, env })).rejects.toThrow(
      /Cannot find package 'typescript'/,
    );
  });

  it('runs its bin from the installed package', async () => {
    const { stdout } = await run(process.execPath, [join(project, 'node_modules', '.bin', 'skillsmith'), '--help'], { cwd: project, env });
    expect(stdout).toMatch(/^Usage: skillsmith/);
    expect(stdout).toMatch(/\bingest\b/);
  });
});
