import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAgentSkillsDocument } from '../../src/skills/agentskills-rules.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

const run = promisify(execFile);
let database: TestDatabase;
let scratch: string;

beforeAll(async () => {
  database = await openTestDatabase();
  scratch = await mkdtemp(join(tmpdir(), 'skillsmith-cli-'));
});

afterAll(async () => {
  await database?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real bin (async, so the in-process embedded database keeps serving). */
async function skillsmith(...args: string[]): Promise<CliResult> {
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    SKILLSMITH_HOME: join(scratch, 'home'),
    SKILLSMITH_LOG_LEVEL: 'silent',
    NODE_NO_WARNINGS: '1',
  };
  try {
    const { stdout, stderr } = await run('node', ['bin/skillsmith.js', ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

async function writePackage(root: string, name: string): Promise<string> {
  const directory = join(root, name);
  await mkdir(join(directory, 'references'), { recursive: true });
  await writeFile(
    join(directory, 'SKILL.md'),
    [
      '---',
      `name: ${name}`,
      'version: 1.0.0',
      'description: Summarise a repository layout for a new contributor.',
      'required_tools:',
      '  - workspace.list_files',
      '---',
      '',
      '# Instructions',
      '',
      '1. List the files. 2. Read references/layout.md.',
      '',
    ].join('\n'),
  );
  await writeFile(join(directory, 'references', 'layout.md'), '# Layout\n');
  return directory;
}

describe('skillsmith skills (CLI)', { timeout: 180_000 }, () => {
  it('install → list → show → export → re-install gives the same content_sha256', async () => {
    const source = await writePackage(join(scratch, 'src'), 'repo-tour');
    const installed = await skillsmith('skills', 'install', source, '--tenant', 'cli', '--json');
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    const first = JSON.parse(installed.stdout) as { name: string; revision: number; contentSha256: string; requiredTools: string[] };
    expect(first).toMatchObject({ name: 'repo-tour', revision: 1, requiredTools: ['workspace.list_files'] });

    const listed = JSON.parse((await skillsmith('skills', 'list', '--tenant', 'cli', '--json')).stdout) as {
      skills: Array<{ name: string; revision: number }>;
    };
    expect(listed.skills.map((skill) => `${skill.name}@${skill.revision}`)).toEqual(['repo-tour@1']);

    const shown = JSON.parse((await skillsmith('skills', 'show', 'repo-tour@1', '--tenant', 'cli', '--json')).stdout) as {
      body: string;
      contentSha256: string;
    };
    expect(shown.body).toContain('1. List the files.');
    expect(shown.contentSha256).toBe(first.contentSha256);

    const out = join(scratch, 'exported');
    const exported = await skillsmith('skills', 'export', 'repo-tour', '--out', out, '--tenant', 'cli', '--json');
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ files: ['SKILL.md', 'references/layout.md'] });
    expect(await readFile(join(out, 'repo-tour', 'SKILL.md'), 'utf8')).toBe(await readFile(join(source, 'SKILL.md'), 'utf8'));

    const reinstalled = JSON.parse((await skillsmith('skills', 'install', join(out, 'repo-tour'), '--tenant', 'cli', '--json')).stdout) as {
      revision: number;
      contentSha256: string;
    };
    expect(reinstalled).toMatchObject({ revision: 2, contentSha256: first.contentSha256 });

    const archived = await skillsmith('skills', 'archive', 'repo-tour@2', '--tenant', 'cli');
    expect(archived.code).toBe(0);
    expect(archived.stdout).toContain('archived repo-tour@2');
    const afterArchive = JSON.parse((await skillsmith('skills', 'show', 'repo-tour', '--tenant', 'cli', '--json')).stdout) as {
      revision: number;
    };
    expect(afterArchive.revision).toBe(1);
  });

  it('export --canonical writes an agentskills.io-valid SKILL.md that re-installs to the same manifest', async () => {
    const source = await writePackage(join(scratch, 'legacy'), 'legacy-shape');
    expect((await skillsmith('skills', 'install', source, '--tenant', 'canon')).code).toBe(0);
    const out = join(scratch, 'canonical');
    const exported = await skillsmith('skills', 'export', 'legacy-shape@1', '--out', out, '--canonical', '--tenant', 'canon');
    expect(exported.code).toBe(0);
    const text = await readFile(join(out, 'legacy-shape', 'SKILL.md'), 'utf8');
    expect(checkAgentSkillsDocument(text, 'legacy-shape')).toEqual([]);
    expect(text).toContain('required-tools: workspace.list_files');
    const reinstalled = JSON.parse(
      (await skillsmith('skills', 'install', join(out, 'legacy-shape'), '--tenant', 'canon', '--json')).stdout,
    ) as { revision: number; version: string; requiredTools: string[] };
    expect(reinstalled).toMatchObject({ revision: 2, version: '1.0.0', requiredTools: ['workspace.list_files'] });
  });

  it('exits non-zero with a one-line reason naming the rule and the measured value', async () => {
    const directory = await writePackage(join(scratch, 'bad'), 'wrong-dir');
    await writeFile(join(directory, 'SKILL.md'), '---\nname: other-name\nversion: 1.0.0\ndescription: d\n---\nbody\n');
    const failed = await skillsmith('skills', 'install', directory, '--tenant', 'cli', '--json');
    expect(failed.code).not.toBe(0);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toMatch(/^skillsmith: name "other-name" does not equal the directory name "wrong-dir"/);
    expect(JSON.parse(failed.stdout)).toMatchObject({ error: { code: 'SkillNameDirectoryMismatch' } });
    const missing = await skillsmith('skills', 'show', 'nobody@3', '--tenant', 'cli');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('"nobody@3"');
  });
});
