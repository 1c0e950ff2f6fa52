import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import { createPackageArchive, contentSha256 } from '../../src/skills/package-archive.ts';
import {
  SkillNotFound,
  SkillPinMismatch,
  SkillProvenanceInvalid,
  SkillRevisionConflict,
  SkillSourceImmutable,
  SkillSourceRefused,
} from '../../src/skills/skill-errors.ts';
import { SkillNameNotUnique, SkillPackagePathEscape, SkillVersionInvalid } from '../../src/skills/validation-errors.ts';
import { openSkillPackageMember } from '../../src/store/skill-package-store.ts';
import { parseSkillRef } from '../../src/skills/skill-ref.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { countSkillRows, type TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';

let database: TestDatabase;
let repository: SkillRepository;

beforeAll(async () => {
  let services: Services;
  ({ database, services } = await openTestServices());
  repository = services.skills;
});

afterAll(async () => {
  await database?.close();
});

const agentAuthor = (invocationId: string) => ({
  runId: 'run-1',
  principalId: 'principal-1',
  invocationId,
  idempotencyKey: `key-${invocationId}`,
});

describe('SkillRepository.install', () => {
  it('assigns revision 1, stores the archive and records trust from the source', async () => {
    const pkg = skillPackage({ name: 'install-basic' }, { extraFiles: { 'references/a.md': 'a' } });
    const installed = await repository.install('t-install', pkg, { source: 'operator' });
    expect(installed).toMatchObject({
      tenantId: 't-install',
      name: 'install-basic',
      revision: 1,
      source: 'operator',
      trust: 'trusted_configuration',
      status: 'active',
      fileCount: 2,
      authoredBy: null,
      packageKey: `skills/t-install/${installed.skillId}/1`,
    });
    expect(installed.contentSha256).toBe(contentSha256(await createPackageArchive(pkg)));
    expect(installed.body).toBe('# Instructions\n\n1. Read.');
    // The same content as the newest active revision writes nothing: that revision answers.
    const before = await countSkillRows(database.pool, 't-install');
    const again = await repository.installPackage('t-install', pkg, { source: 'operator' });
    expect(again).toMatchObject({ outcome: 'unchanged', versionDefaulted: false, revision: { revision: 1, id: installed.id } });
    expect(await countSkillRows(database.pool, 't-install')).toEqual(before);
    const changed = await repository.installPackage('t-install', skillPackage({ name: 'install-basic', version: '1.0.1' }), {
      source: 'operator',
    });
    expect(changed).toMatchObject({ outcome: 'installed', revision: { revision: 2 } });
  });

  it('refuses source mcp in the store itself and writes nothing', async () => {
    const before = await countSkillRows(database.pool, 't-mcp');
    await expect(repository.install('t-mcp', skillPackage({ name: 'mcp-skill' }), { source: 'mcp' })).rejects.toBeInstanceOf(
      SkillSourceRefused,
    );
    expect(await countSkillRows(database.pool, 't-mcp')).toEqual(before);
  });

  it('refuses a later install under another source, leaving the identity unchanged', async () => {
    await repository.install('t-source', skillPackage({ name: 'owned' }), { source: 'operator' });
    const before = await countSkillRows(database.pool, 't-source');
    await expect(
      repository.install('t-source', skillPackage({ name: 'owned' }), { source: 'agent', authoredBy: agentAuthor('inv-source') }),
    ).rejects.toBeInstanceOf(SkillSourceImmutable);
    expect(await countSkillRows(database.pool, 't-source')).toEqual(before);
    expect((await repository.resolve('t-source', 'owned')).source).toBe('operator');
  });

  it('requires authoredBy exactly for agent installs and records durable provenance', async () => {
    await expect(repository.install('t-agent', skillPackage({ name: 'by-agent' }), { source: 'agent' })).rejects.toBeInstanceOf(
      SkillProvenanceInvalid,
    );
    await expect(
      repository.install('t-agent', skillPackage({ name: 'by-operator' }), { source: 'operator', authoredBy: agentAuthor('x') }),
    ).rejects.toBeInstanceOf(SkillProvenanceInvalid);
    const installed = await repository.install('t-agent', skillPackage({ name: 'by-agent' }), {
      source: 'agent',
      authoredBy: agentAuthor('inv-1'),
    });
    expect(installed.trust).toBe('external_untrusted');
    expect(installed.authoredBy).toEqual(agentAuthor('inv-1'));
    const replay = await repository.install('t-agent', skillPackage({ name: 'by-agent' }), {
      source: 'agent',
      authoredBy: agentAuthor('inv-1'),
    });
    expect(replay.revision).toBe(installed.revision);
    expect((await countSkillRows(database.pool, 't-agent')).revisions).toBe(1);
  });

  it('refuses a stale expectedRevision with SkillRevisionConflict carrying the current revision, writing nothing', async () => {
    await repository.install('t-cas', skillPackage({ name: 'cas' }), { source: 'operator' });
    await repository.install('t-cas', skillPackage({ name: 'cas', version: '1.0.1' }), { source: 'operator', expectedRevision: 1 });
    const before = await countSkillRows(database.pool, 't-cas');
    const failure = await repository
      .install('t-cas', skillPackage({ name: 'cas', version: '9.9.9' }), { source: 'operator', expectedRevision: 1 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SkillRevisionConflict);
    expect((failure as SkillRevisionConflict).currentRevision).toBe(2);
    expect(await countSkillRows(database.pool, 't-cas')).toEqual(before);
  });

  it('refuses a create (expectedRevision 0) while the name has an active revision, and allows it once all are archived', async () => {
    await repository.install('t-unique', skillPackage({ name: 'taken' }), { source: 'operator' });
    await expect(
      repository.install('t-unique', skillPackage({ name: 'taken' }), { source: 'operator', expectedRevision: 0 }),
    ).rejects.toBeInstanceOf(SkillNameNotUnique);
    await repository.archive('t-unique', 'taken', 1);
    const recreated = await repository.install('t-unique', skillPackage({ name: 'taken' }), {
      source: 'operator',
      expectedRevision: 0,
    });
    expect(recreated.revision).toBe(2);
  });

  it('leaves no row and no archive for a rejected package', async () => {
    const before = await countSkillRows(database.pool, 't-reject');
    await expect(
      repository.install('t-reject', skillPackage({ name: 'bad', version: 'one' }), { source: 'operator' }),
    ).rejects.toBeInstanceOf(SkillVersionInvalid);
    expect(await countSkillRows(database.pool, 't-reject')).toEqual(before);
  });

  it('opens one stored member by path and refuses a path outside the package', async () => {
    const installed = await repository.install(
      't-member',
      skillPackage({ name: 'members' }, { extraFiles: { 'references/guide.md': 'the guide' } }),
      { source: 'operator' },
    );
    const member = await openSkillPackageMember(database.pool, 't-member', installed.packageKey, 'references/guide.md');
    expect(new TextDecoder().decode(member)).toBe('the guide');
    await expect(openSkillPackageMember(database.pool, 't-member', installed.packageKey, '../../etc/passwd')).rejects.toBeInstanceOf(
      SkillPackagePathEscape,
    );
  });

  it('keeps tenants apart', async () => {
    await repository.install('t-one', skillPackage({ name: 'shared-name' }), { source: 'operator' });
    await expect(repository.resolve('t-two', 'shared-name')).rejects.toBeInstanceOf(SkillNotFound);
    const other = await repository.install('t-two', skillPackage({ name: 'shared-name' }), { source: 'builtin' });
    expect(other.revision).toBe(1);
    expect(other.trust).toBe('trusted_configuration');
  });
});

describe('concurrent installs', () => {
  it('give consecutive revisions, never the same and never a gap', async () => {
    const installs = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        repository.install('t-race', skillPackage({ name: 'raced', version: `1.0.${index}` }), { source: 'operator' }),
      ),
    );
    expect(installs.map((installed) => installed.revision).sort()).toEqual([1, 2, 3, 4]);
    const pairs = await Promise.all([
      repository.install('t-race', skillPackage({ name: 'raced', version: '2.0.0' }), { source: 'operator' }),
      repository.install('t-race', skillPackage({ name: 'raced', version: '2.0.1' }), { source: 'operator' }),
    ]);
    expect(pairs.map((installed) => installed.revision).sort()).toEqual([5, 6]);
  });
});

describe('SkillRepository.resolve, listActive and archive', () => {
  it('floats a bare name to the newest active revision and pins name@rev exactly, archived or not', async () => {
    for (const version of ['1.0.0', '1.1.0', '1.2.0']) {
      await repository.install('t-resolve', skillPackage({ name: 'floaty', version }), { source: 'operator' });
    }
    expect((await repository.resolve('t-resolve', 'floaty')).revision).toBe(3);
    await repository.archive('t-resolve', 'floaty', 3);
    expect((await repository.resolve('t-resolve', 'floaty')).revision).toBe(2);
    const pinned = await repository.resolve('t-resolve', 'floaty@3');
    expect(pinned.status).toBe('archived');
    expect(pinned.manifest.version).toBe('1.2.0');
    expect((await repository.listActive('t-resolve', 20)).map((revision) => `${revision.name}@${revision.revision}`)).toEqual(['floaty@2']);
    // Many refs in one statement resolve as each would alone, answered at each ref's index.
    const refs = ['floaty', 'floaty@3', 'nobody', 'floaty@99', 'floaty@1'].map((ref) => parseSkillRef(ref));
    const catalog = await repository.findCatalogRevisions('t-resolve', refs);
    expect(catalog.map((revision) => revision && `${revision.name}@${revision.revision}`)).toEqual([
      'floaty@2',
      'floaty@3',
      undefined,
      undefined,
      'floaty@1',
    ]);
    expect(catalog[1]).toEqual({
      name: 'floaty',
      revision: 3,
      contentSha256: pinned.contentSha256,
      source: 'operator',
      trust: 'trusted_configuration',
      manifest: pinned.manifest,
    });
    expect(await repository.findCatalogRevisions('t-other', refs)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('fails an unknown name or revision with SkillNotFound quoting the ref', async () => {
    await expect(repository.resolve('t-resolve', 'nobody')).rejects.toThrow(/"nobody"/);
    await expect(repository.resolve('t-resolve', 'floaty@99')).rejects.toThrow(/"floaty@99"/);
    await expect(repository.resolve('t-resolve', 'floaty@99')).rejects.toBeInstanceOf(SkillNotFound);
    await expect(repository.archive('t-resolve', 'floaty', 99)).rejects.toBeInstanceOf(SkillNotFound);
  });

  it('archives by changing status only', async () => {
    const before = await repository.resolve('t-resolve', 'floaty@1');
    const archived = await repository.archive('t-resolve', 'floaty', 1, {
      archivedByInvocationId: 'inv-archive',
      archiveIdempotencyKey: 'key-archive',
    });
    expect(archived).toEqual({
      ...before,
      status: 'archived',
      archivedByInvocationId: 'inv-archive',
      archiveIdempotencyKey: 'key-archive',
    });
  });
});

describe('gate.skill.revision_pinned', () => {
  it('a pin resolves to the original bytes after two newer revisions, and a corrupted archive raises', async () => {
    const original = await repository.install('t-pin', skillPackage({ name: 'pinned' }, { body: 'Original steps.' }), {
      source: 'operator',
    });
    const pin = { name: 'pinned', revision: original.revision, contentSha256: original.contentSha256 };
    await repository.install('t-pin', skillPackage({ name: 'pinned', version: '1.1.0' }, { body: 'Second.' }), {
      source: 'operator',
    });
    await repository.install('t-pin', skillPackage({ name: 'pinned', version: '1.2.0' }, { body: 'Third.' }), {
      source: 'operator',
    });
    expect((await repository.resolve('t-pin', 'pinned')).revision).toBe(3);
    const [replayed] = await repository.verifyPins('t-pin', [pin]);
    expect(replayed?.revision).toBe(1);
    expect(replayed?.body).toBe('Original steps.');
    const bytes = await repository.readArchive('t-pin', original);
    expect(contentSha256(bytes)).toBe(pin.contentSha256);

    await database.pool.query(`UPDATE skill_packages SET bytes = bytes || '\\x00'::bytea WHERE tenant_id = $1 AND key = $2`, [
      't-pin',
      original.packageKey,
    ]);
    await expect(repository.verifyPins('t-pin', [pin])).rejects.toBeInstanceOf(SkillPinMismatch);
    await expect(repository.readArchive('t-pin', original)).rejects.toBeInstanceOf(SkillPinMismatch);
    await expect(repository.verifyPins('t-pin', [{ ...pin, revision: 2 }])).rejects.toThrow(/pinned@2 expects content_sha256/);
  });
});
