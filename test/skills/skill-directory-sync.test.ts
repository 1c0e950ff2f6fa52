import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import { SkillSyncTargetUnsafe, SYNC_MANIFEST_FILE, syncSkillDirectory } from '../../src/skills/skill-directory-sync.ts';
import type { TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';
import { skillPackage } from './skill-fixtures.ts';

/** Files under `directory`, recursively, with their content (what an attack outside the target would change). */
async function snapshot(directory: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path.slice(directory.length + 1)] = await readFile(path, 'utf8');
  }
  return files;
}

describe('skills sync never writes outside its directory', () => {
  let database: TestDatabase;
  let services: Services;
  let scratch: string;
  const tenant = 'sync-hostile';

  beforeAll(async () => {
    ({ database, services } = await openTestServices());
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-sync-hostile-'));
    await services.skills.install(tenant, skillPackage({ name: 'deploy-service' }, { extraFiles: { 'references/a.md': 'A' } }), {
      source: 'operator',
    });
  });
  afterAll(async () => {
    await database?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** A fresh target and an "outside" directory holding a file an attacker wants overwritten. */
  async function setUp(name: string): Promise<{ target: string; outside: string }> {
    const target = join(scratch, name, 'target');
    const outside = join(scratch, name, 'outside');
    await mkdir(target, { recursive: true });
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'SKILL.md'), 'precious');
    return { target, outside };
  }

  const sync = (directory: string) => syncSkillDirectory({ skills: services.skills, tenantId: tenant, directory, maxSkillBytes: 4096 });

  it('refuses a symlinked skill directory planted in the target, writing nothing on either side', async () => {
    const { target, outside } = await setUp('planted-directory');
    await symlink(outside, join(target, 'deploy-service'));
    const error = await sync(target).catch((caught: unknown) => caught);
    expect(await snapshot(outside)).toEqual({ 'SKILL.md': 'precious' });
    expect(error).toBeInstanceOf(SkillSyncTargetUnsafe);
    expect(error).toMatchObject({ path: 'deploy-service', reason: 'is a symlink' });
    expect(await readdir(target)).toEqual(['deploy-service']);
  });

  it('refuses a symlink planted at a file it would write (or read), and at its manifest', async () => {
    const file = await setUp('planted-file');
    await mkdir(join(file.target, 'deploy-service'));
    await symlink(join(file.outside, 'SKILL.md'), join(file.target, 'deploy-service', 'SKILL.md'));
    await expect(sync(file.target)).rejects.toMatchObject({ code: 'SkillSyncTargetUnsafe', path: 'deploy-service/SKILL.md' });
    expect(await snapshot(file.outside)).toEqual({ 'SKILL.md': 'precious' });

    const manifest = await setUp('planted-manifest');
    await symlink(join(manifest.outside, 'SKILL.md'), join(manifest.target, SYNC_MANIFEST_FILE));
    await expect(sync(manifest.target)).rejects.toMatchObject({ code: 'SkillSyncTargetUnsafe', path: SYNC_MANIFEST_FILE });
    expect(await snapshot(manifest.outside)).toEqual({ 'SKILL.md': 'precious' });
  });

  it('never writes through a file planted at the name of its temporary file', async () => {
    const { target, outside } = await setUp('planted-temporary');
    await mkdir(join(target, 'deploy-service'));
    await symlink(join(outside, 'SKILL.md'), join(target, 'deploy-service', 'SKILL.md.skillsmith-tmp'));
    await symlink(join(outside, 'SKILL.md'), join(target, `${SYNC_MANIFEST_FILE}.tmp`));
    const result = await sync(target);
    expect(result.written.sort()).toEqual(['deploy-service/SKILL.md', 'deploy-service/references/a.md']);
    expect(await snapshot(outside)).toEqual({ 'SKILL.md': 'precious' });
    expect(await readFile(join(target, 'deploy-service', 'SKILL.md'), 'utf8')).toContain('name: deploy-service');
  });

  it('refuses to remove a file it wrote once its directory has been replaced by a symlink', async () => {
    const { target, outside } = await setUp('planted-after-sync');
    await services.skills.install(tenant, skillPackage({ name: 'old-skill' }), { source: 'operator' });
    await sync(target);
    const written = await readFile(join(target, 'old-skill', 'SKILL.md'), 'utf8');
    await services.skills.archive(tenant, 'old-skill', 1);
    // The attacker swaps the directory for a link to one holding the same bytes (so the sha256 matches).
    await rm(join(target, 'old-skill'), { recursive: true });
    await writeFile(join(outside, 'SKILL.md'), written);
    await symlink(outside, join(target, 'old-skill'));
    await expect(sync(target)).rejects.toMatchObject({ code: 'SkillSyncTargetUnsafe', path: 'old-skill' });
    expect(await snapshot(outside)).toEqual({ 'SKILL.md': written });
  });
});
