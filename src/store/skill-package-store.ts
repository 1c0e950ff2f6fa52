import { contentSha256, openMember } from '../skills/package-archive.ts';
import type { Queryable } from './database.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * SkillPackageStore: archive bytes by derived key. The only module with SQL for
 * `skill_packages`. No expiry and no sweeping — a pinned revision resolves forever.
 */
export class SkillPackageMissing extends SkillsmithError {
  static override readonly code = 'SkillPackageMissing';
  static override readonly httpStatus = 409;
  constructor(readonly key: string) {
    super(`skill package ${key} is missing from the store`);
  }
}

/** The key is derived from three platform-controlled values, never from author input. */
export function skillPackageKey(tenantId: string, skillId: string, revision: number): string {
  return `skills/${tenantId}/${skillId}/${revision}`;
}

export interface StoredPackage {
  key: string;
  contentSha256: string;
}

export async function putSkillPackage(
  db: Queryable,
  tenantId: string,
  skillId: string,
  revision: number,
  archiveBytes: Uint8Array,
): Promise<StoredPackage> {
  const key = skillPackageKey(tenantId, skillId, revision);
  const sha256 = contentSha256(archiveBytes);
  await db.query(
    `INSERT INTO skill_packages (tenant_id, key, skill_id, revision, bytes, content_sha256)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [tenantId, key, skillId, revision, Buffer.from(archiveBytes), sha256],
  );
  return { key, contentSha256: sha256 };
}

/** The archive bytes exactly as stored (callers that must trust them re-hash them). */
export async function getSkillPackage(db: Queryable, tenantId: string, key: string): Promise<Uint8Array> {
  const result = await db.query<{ bytes: Buffer }>('SELECT bytes FROM skill_packages WHERE tenant_id = $1 AND key = $2', [tenantId, key]);
  const row = result.rows[0];
  if (!row) throw new SkillPackageMissing(key);
  return new Uint8Array(row.bytes);
}

/** One member of a stored package; the path is checked before the archive is opened. */
export async function openSkillPackageMember(db: Queryable, tenantId: string, key: string, memberPath: string): Promise<Uint8Array> {
  return openMember(await getSkillPackage(db, tenantId, key), memberPath);
}
