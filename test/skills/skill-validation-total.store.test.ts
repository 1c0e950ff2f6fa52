import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import { serializeSkillDocument } from '../../src/skills/skill-format.ts';
import { readPackageDirectory, type SkillPackage } from '../../src/skills/skill-package.ts';
import { SkillValidationError } from '../../src/skills/validation-errors.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { countSkillRows, type TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';

let database: TestDatabase;
let repository: SkillRepository;
let scratch: string;

beforeAll(async () => {
  let services: Services;
  ({ database, services } = await openTestServices());
  repository = services.skills;
  scratch = await mkdtemp(join(tmpdir(), 'skillsmith-total-'));
});

afterAll(async () => {
  await database?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const encoder = new TextEncoder();
const validName = fc.stringMatching(/^[a-z0-9]{1,6}(-[a-z0-9]{1,6}){0,2}$/);
const nameArbitrary = fc.oneof(
  { weight: 14, arbitrary: validName },
  { weight: 1, arbitrary: fc.constantFrom('Bad', '-x', 'x-', 'a--b', 'a_b', 'a'.repeat(65), '') },
);
const versionArbitrary = fc.oneof(
  { weight: 14, arbitrary: fc.tuple(fc.nat(9), fc.nat(9), fc.nat(9)).map((parts) => parts.join('.')) },
  { weight: 1, arbitrary: fc.constantFrom('1.0', 'v1', 'latest', '') },
);
const descriptionArbitrary = fc.oneof(
  { weight: 14, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constantFrom('', 'line one\nline two', 'x'.repeat(501), 'word '.repeat(90).trim()) },
);
const toolArbitrary = fc.oneof(
  { weight: 40, arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}(\.[a-z_][a-z0-9_]{0,8}){0,2}$/) },
  { weight: 1, arbitrary: fc.constantFrom('bad tool', 'a..b', '9lives', '') },
);
const memberPathArbitrary = fc.oneof(
  { weight: 30, arbitrary: fc.stringMatching(/^(references|templates|scripts|evals)\/[a-z0-9]{1,8}\.(md|txt|sh)$/) },
  { weight: 1, arbitrary: fc.constantFrom('../escape.md', '/etc/passwd', 'references\\win.md', 'a/../../b.md', 'x/./y.md') },
);
const packageArbitrary = fc.record({
  name: nameArbitrary,
  directoryMatches: fc.integer({ min: 0, max: 19 }).map((draw) => draw > 0),
  version: versionArbitrary,
  description: descriptionArbitrary,
  requiredTools: fc.array(toolArbitrary, { maxLength: 11 }),
  bodyWords: fc.oneof({ weight: 14, arbitrary: fc.integer({ min: 1, max: 400 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 3100) }),
  extraFiles: fc.oneof(
    { weight: 14, arbitrary: fc.array(memberPathArbitrary, { maxLength: 6 }) },
    { weight: 1, arbitrary: fc.constant(Array.from({ length: 70 }, (_, index) => `references/r${index}.md`)) },
  ),
  bigFile: fc.integer({ min: 0, max: 19 }).map((draw) => draw === 0),
  skillMd: fc.constantFrom(...Array<string>(8).fill('canonical'), 'missing', 'no-front-matter'),
  onDisk: fc.boolean(),
  symlinkOnDisk: fc.integer({ min: 0, max: 7 }).map((draw) => draw === 0),
});
type GeneratedPackage = typeof packageArbitrary extends fc.Arbitrary<infer T> ? T : never;

function buildFiles(generated: GeneratedPackage): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const body = 'step '.repeat(generated.bodyWords).trim();
  const manifest = {
    name: generated.name,
    version: generated.version,
    description: generated.description,
    requiredTools: generated.requiredTools,
    license: 'MIT',
  };
  if (generated.skillMd === 'canonical') files.set('SKILL.md', encoder.encode(serializeSkillDocument(manifest, body)));
  if (generated.skillMd === 'no-front-matter') files.set('SKILL.md', encoder.encode(`# ${generated.name}\n\n${body}`));
  for (const path of generated.extraFiles) files.set(path, encoder.encode(`content of ${path}`));
  if (generated.bigFile) files.set('references/big.bin', new Uint8Array(1_048_577));
  return files;
}

let diskCounter = 0;
async function materialise(generated: GeneratedPackage, directoryName: string): Promise<SkillPackage> {
  const files = buildFiles(generated);
  const safeOnDisk = [...files.keys()].every((path) => /^[a-zA-Z0-9_./-]+$/.test(path) && !path.split('/').includes('..'));
  if (!generated.onDisk || !safeOnDisk || directoryName.length === 0) return { directoryName, files };
  diskCounter += 1;
  const directory = join(scratch, String(diskCounter), directoryName);
  for (const [path, content] of files) {
    await mkdir(dirname(join(directory, path)), { recursive: true });
    await writeFile(join(directory, path), content);
  }
  await mkdir(directory, { recursive: true });
  if (generated.symlinkOnDisk) await symlink('/etc/hostname', join(directory, 'linked.md'));
  return readPackageDirectory(directory);
}

describe('gate.skill.validation_total', () => {
  it('every generated package yields a revision or a named SkillValidationError, and a rejection writes nothing', async () => {
    const tenantId = 'validation-total';
    const outcomes = { installed: 0, rejected: new Map<string, number>() };
    await fc.assert(
      fc.asyncProperty(packageArbitrary, async (generated) => {
        const before = await countSkillRows(database.pool, tenantId);
        const directoryName = generated.directoryMatches ? generated.name : `${generated.name}-dir`;
        try {
          const skillPackage = await materialise(generated, directoryName);
          const installed = await repository.install(tenantId, skillPackage, { source: 'operator' });
          outcomes.installed += 1;
          expect(installed.revision).toBeGreaterThanOrEqual(1);
          const after = await countSkillRows(database.pool, tenantId);
          expect(after.revisions).toBe(before.revisions + 1);
          expect(after.packages).toBe(before.packages + 1);
          expect((await repository.resolve(tenantId, `${installed.name}@${installed.revision}`)).contentSha256).toBe(
            installed.contentSha256,
          );
        } catch (error) {
          expect(error).toBeInstanceOf(SkillValidationError);
          const name = (error as Error).name;
          expect(name).toMatch(/^Skill[A-Za-z]+$/);
          expect(name).not.toBe('SkillValidationError');
          expect((error as Error).message.length).toBeGreaterThan(0);
          outcomes.rejected.set(name, (outcomes.rejected.get(name) ?? 0) + 1);
          expect(await countSkillRows(database.pool, tenantId)).toEqual(before);
        }
      }),
      { numRuns: 60 },
    );
    console.info('validation_total outcomes', outcomes.installed, Object.fromEntries(outcomes.rejected));
    expect(outcomes.installed).toBeGreaterThan(0);
    expect(outcomes.rejected.size).toBeGreaterThan(2);
    expect(outcomes.installed).toBeGreaterThanOrEqual(3);
  });
});
