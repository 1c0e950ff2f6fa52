import { link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contentSha256,
  createPackageArchive,
  openMember,
  readPackageArchive,
  SkillMemberNotFound,
} from '../../src/skills/package-archive.ts';
import { readPackageDirectory } from '../../src/skills/skill-package.ts';
import {
  SkillPackageHardLink,
  SkillPackagePathEscape,
  SkillPackageSymlink,
  SkillPackageTooManyFiles,
} from '../../src/skills/validation-errors.ts';
import { encoder, skillPackage } from './skill-fixtures.ts';

async function rawTar(entries: Array<{ name: string; type?: 'file' | 'symlink' | 'link'; content?: string; linkname?: string }>) {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) chunks.push(Buffer.from(chunk as Uint8Array));
  })();
  for (const entry of entries) {
    await new Promise<void>((resolve, reject) => {
      const content = Buffer.from(entry.content ?? '');
      const isFile = entry.type === undefined || entry.type === 'file';
      const header = { name: entry.name, type: entry.type ?? 'file', linkname: entry.linkname, size: isFile ? content.length : 0 };
      const callback = (error?: Error | null) => (error ? reject(error) : resolve());
      if (isFile) pack.entry(header, content, callback);
      else pack.entry(header, callback);
    });
  }
  pack.finalize();
  await done;
  return new Uint8Array(gzipSync(Buffer.concat(chunks)));
}

describe('createPackageArchive', () => {
  it('gives the same bytes for the same content whatever the insertion order', async () => {
    const first = skillPackage({}, { extraFiles: { 'references/b.md': 'b', 'references/a.md': 'a' } });
    const second = { directoryName: first.directoryName, files: new Map([...first.files].reverse()) };
    const left = await createPackageArchive(first);
    const right = await createPackageArchive(second);
    expect(Buffer.from(left).equals(Buffer.from(right))).toBe(true);
    expect(contentSha256(left)).toBe(contentSha256(right));
    expect(left[4]).toBe(0);
    expect(left[9]).toBe(0xff);
  });

  it('round-trips every member and opens one by path', async () => {
    const original = skillPackage({}, { extraFiles: { 'templates/t.txt': 'template', 'scripts/run.sh': '#!/bin/sh' } });
    const archive = await createPackageArchive(original);
    const restored = await readPackageArchive(archive, original.directoryName);
    expect([...restored.files.keys()].sort()).toEqual([...original.files.keys()].sort());
    expect(new TextDecoder().decode(await openMember(archive, 'templates/t.txt'))).toBe('template');
    await expect(openMember(archive, 'templates/none.txt')).rejects.toBeInstanceOf(SkillMemberNotFound);
  });

  it('refuses to open a path outside the package', async () => {
    const archive = await createPackageArchive(skillPackage());
    for (const path of ['../SKILL.md', '/SKILL.md', 'a\\b', 'references/../../x']) {
      await expect(openMember(archive, path)).rejects.toBeInstanceOf(SkillPackagePathEscape);
    }
  });

  it('refuses archives carrying symlink or hardlink entries, or traversal member names', async () => {
    const withSymlink = await rawTar([
      { name: 'SKILL.md', content: 'x' },
      { name: 'evil', type: 'symlink', linkname: '/etc/passwd' },
    ]);
    await expect(readPackageArchive(withSymlink, 'a')).rejects.toBeInstanceOf(SkillPackageSymlink);
    await expect(openMember(withSymlink, 'SKILL.md')).rejects.toBeInstanceOf(SkillPackageSymlink);
    const withHardlink = await rawTar([
      { name: 'SKILL.md', content: 'x' },
      { name: 'h', type: 'link', linkname: 'SKILL.md' },
    ]);
    await expect(readPackageArchive(withHardlink, 'a')).rejects.toBeInstanceOf(SkillPackageSymlink);
    const traversal = await rawTar([{ name: '../outside.md', content: 'x' }]);
    await expect(readPackageArchive(traversal, 'a')).rejects.toBeInstanceOf(SkillPackagePathEscape);
  });
});

describe('readPackageDirectory', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'skillsmith-package-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads regular files by POSIX path and names the package after the directory', async () => {
    const directory = join(root, 'my-skill');
    await mkdir(join(directory, 'references'), { recursive: true });
    await writeFile(join(directory, 'SKILL.md'), 'x');
    await writeFile(join(directory, 'references', 'a.md'), 'a');
    const read = await readPackageDirectory(directory);
    expect(read.directoryName).toBe('my-skill');
    expect([...read.files.keys()]).toEqual(['SKILL.md', 'references/a.md']);
    expect(read.files.get('references/a.md')).toEqual(encoder.encode('a'));
  });

  it('refuses a symlink without following it', async () => {
    const directory = join(root, 'linked');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'SKILL.md'), 'x');
    await symlink('/etc/passwd', join(directory, 'passwd'));
    await expect(readPackageDirectory(directory)).rejects.toBeInstanceOf(SkillPackageSymlink);
  });

  it('refuses a hard-linked member (a second name of a file that may live outside the package)', async () => {
    const directory = join(root, 'hard-linked');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'SKILL.md'), 'x');
    const outside = join(root, 'secret.txt');
    await writeFile(outside, 'not for the package');
    await link(outside, join(directory, 'notes.md'));
    const error = await readPackageDirectory(directory).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SkillPackageHardLink);
    expect(error).toMatchObject({ rule: 'package.no_symlink', measured: 2 });
    expect((error as Error).message).toContain('notes.md');
  });

  it('refuses more than 64 files before reading them', async () => {
    const directory = join(root, 'many');
    await mkdir(directory, { recursive: true });
    for (let index = 0; index < 65; index += 1) await writeFile(join(directory, `f${index}`), 'x');
    await expect(readPackageDirectory(directory)).rejects.toBeInstanceOf(SkillPackageTooManyFiles);
  });
});
