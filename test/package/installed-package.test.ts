import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testModelDir } from '../support/test-model.ts';

const run = promisify(execFile);
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
/**
 * npm's download cache, shared so a run does not fetch 480 packages again: it only spares
 * downloads (npm still resolves every version from the registry, the one network used); it holds
 * no setting. Under `npm test` npm names it; else npm's default.
 */
const npmCache = process.env.npm_config_cache ?? join(homedir(), '.npm');

/**
 * The package as npm publishes it, installed with a plain `npm install` into an empty project
 * the way a new user's machine would: `env -i` (nothing but PATH and an empty HOME: no .npmrc, no
 * npm_config_* or ONNXRUNTIME_* variables, no GPU), the npm registry the only network. It packs
 * the build in dist/ as it is (`npm test` builds first; packing with scripts would rebuild dist/
 * under the CLI tests running beside this one).
 */
describe('the packed package, installed with a plain npm install in a clean environment', () => {
  let directory: string;
  let project: string;
  let home: string;
  let packedFiles: string[];
  let installOutput: string;
  const clean = (...command: string[]) => ['-i', `PATH=${process.env.PATH}`, `HOME=${home}`, ...command];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'skillsmith-package-'));
    home = join(directory, 'home');
    project = join(directory, 'project');
    await Promise.all([mkdir(home), mkdir(project)]);
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', directory], {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH, HOME: home },
    });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    packedFiles = packed!.files.map((file) => file.path);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const installed = await run(
      'env',
      clean(
        'npm',
        'install',
        '--cache',
        npmCache,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        join(directory, packed!.filename),
      ),
      { cwd: project, maxBuffer: 16 * 1024 * 1024 },
    );
    installOutput = installed.stdout + installed.stderr;
  }, 180_000);

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

  it('installs without downloading anything at install time and without an engine warning on this Node', async () => {
    // onnxruntime-node's install script (a CUDA build from nuget.org or GitHub) is not in the tree at all.
    await expect(access(join(project, 'node_modules', 'onnxruntime-node'))).rejects.toThrow(/ENOENT/);
    await expect(access(join(project, 'node_modules', 'skillsmith', 'dist', 'src', 'index.js'))).resolves.toBeUndefined();
    expect(installOutput).not.toMatch(/EBADENGINE|ENOTFOUND|EAI_AGAIN|ECONNREFUSED/);
  });

  it('imports with plain Node and without the devDependencies', async () => {
    const { stdout } = await run(
      'env',
      clean(
        process.execPath,
        '-e',
        `import('skillsmith').then((m) => console.log(JSON.stringify({
          reportRunCompleted: typeof m.reportRunCompleted,
          startSynthesisPass: typeof m.startSynthesisPass,
          parsed: m.parseRunReport({}).success,
        })))`,
      ),
      { cwd: project },
    );
    expect(JSON.parse(stdout)).toMatchObject({ reportRunCompleted: 'function', startSynthesisPass: 'function', parsed: false });
    await expect(run('env', clean(process.execPath, '-e', "import('typescript')"), { cwd: project })).rejects.toThrow(
      /Cannot find package 'typescript'/,
    );
  });

  it('runs its bin, and `models pull` installs the embedding runtime from the registry and embeds with it', async () => {
    const bin = join(project, 'node_modules', '.bin', 'skillsmith');
    const help = await run('env', clean(process.execPath, bin, '--help'), { cwd: project });
    expect(help.stdout).toMatch(/^Usage: skillsmith/);
    expect(help.stdout).toMatch(/\bingest\b/);
    // The test model is already here (npm test pulled it); the runtime is not: the pull installs
    // it into the new home with npm, from the registry, and loads the model on it.
    const pulled = await run(
      'env',
      clean(
        `SKILLSMITH_HOME=${join(project, '.skillsmith')}`,
        `SKILLSMITH_MODEL_DIR=${testModelDir}`,
        `npm_config_cache=${npmCache}`,
        process.execPath,
        bin,
        'models',
        'pull',
        '--model',
        'sentence-transformers/all-MiniLM-L6-v2',
        '--json',
      ),
      { cwd: project },
    );
    expect(JSON.parse(pulled.stdout)).toMatchObject({
      status: 'present',
      runtime: { status: 'installed', directory: expect.stringContaining(join(project, '.skillsmith', 'runtime')) },
      loads: { dimension: 384 },
    });
  }, 120_000);
});
