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

    // The same content as the newest active revision: nothing is installed, and it says so.
    const reinstalled = JSON.parse((await skillsmith('skills', 'install', join(out, 'repo-tour'), '--tenant', 'cli', '--json')).stdout) as {
      revision: number;
      contentSha256: string;
    };
    expect(reinstalled).toMatchObject({ revision: 1, contentSha256: first.contentSha256, outcome: 'unchanged' });
    const again = await skillsmith('skills', 'install', source, '--tenant', 'cli');
    expect(again.stdout).toBe('unchanged: repo-tour@1 already holds this content; nothing installed\n');

    const archived = await skillsmith('skills', 'archive', 'repo-tour@1', '--tenant', 'cli');
    expect(archived.code).toBe(0);
    expect(archived.stdout).toContain('archived repo-tour@1');
    // With no active revision left, the same content installs again, as revision 2.
    const restored = JSON.parse((await skillsmith('skills', 'install', source, '--tenant', 'cli', '--json')).stdout) as object;
    expect(restored).toMatchObject({ revision: 2, contentSha256: first.contentSha256, outcome: 'installed' });
  });

  it('installs a minimal agentskills.io SKILL.md (no version) as 1.0.0, then the next patch, and says so', async () => {
    const directory = join(scratch, 'ecosystem', 'pdf-tools');
    await mkdir(directory, { recursive: true });
    const write = (body: string) =>
      writeFile(
        join(directory, 'SKILL.md'),
        `---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\n---\n\n${body}\n`,
      );
    await write('# PDF tools\n\nUse pdfplumber.');
    const first = await skillsmith('skills', 'install', directory, '--tenant', 'eco');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('pdf-tools@1 (version 1.0.0');
    expect(first.stdout).toContain('version 1.0.0 by default: the SKILL.md names none');
    await write('# PDF tools\n\nUse pdfplumber; fall back to pdftotext.');
    const second = JSON.parse((await skillsmith('skills', 'install', directory, '--tenant', 'eco', '--json')).stdout) as object;
    expect(second).toMatchObject({ revision: 2, version: '1.0.1', versionDefaulted: true, outcome: 'installed' });
  });

  it('reports every validation error at once: all in details.violations under --json, one line each for people', async () => {
    const directory = join(scratch, 'many-wrongs', 'wrongs');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'SKILL.md'), '---\nname: Wrongs\ndescription: ""\nversion: one\n---\n');
    const failed = await skillsmith('skills', 'install', directory, '--tenant', 'cli', '--json');
    expect(failed.code).toBe(1);
    const { error } = JSON.parse(failed.stdout) as { error: { code: string; details: { violations: Array<{ code: string }> } } };
    expect(error.code).toBe('SkillNameInvalid');
    expect(error.details.violations.map((violation) => violation.code)).toEqual([
      'SkillNameInvalid',
      'SkillVersionInvalid',
      'SkillDescriptionInvalid',
      'SkillBodyEmpty',
    ]);
    const human = await skillsmith('skills', 'install', directory, '--tenant', 'cli');
    expect(human.stderr.trim().split('\n')).toEqual([
      'skillsmith: 4 problems:',
      expect.stringMatching(/^ {2}- name "Wrongs" does not match/),
      expect.stringMatching(/^ {2}- version "one" does not parse as semver/),
      '  - description is 0 characters, limit 1 to 500',
      expect.stringMatching(/^ {2}- body is 0 tokens/),
    ]);
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
