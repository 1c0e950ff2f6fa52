import type pg from 'pg';
import semver from 'semver';
import { contentSha256, createPackageArchive } from '../skills/package-archive.ts';
import { DEFAULT_SKILL_VERSION, type SkillManifest } from '../skills/skill-format.ts';
import {
  SkillNotFound,
  SkillPinMismatch,
  SkillProvenanceInvalid,
  SkillRevisionConflict,
  SkillSourceImmutable,
  SkillSourceRefused,
} from '../skills/skill-errors.ts';
import type { SkillPackage } from '../skills/skill-package.ts';
import {
  authoringContextSchema,
  skillSourceSchema,
  trustForSource,
  type AuthoringContext,
  type SkillRevision,
  type SkillSource,
  type SkillStatus,
  type TrustLevel,
} from '../skills/skill-revision.ts';
import { formatSkillRef, parseSkillRef, type SkillPin, type SkillRef } from '../skills/skill-ref.ts';
import { SkillNameNotUnique } from '../skills/validation-errors.ts';
import { validateManifest, validateSkillPackage } from '../skills/validator.ts';
import { withTransaction, type Queryable } from './database.ts';
import { mapRow } from './row-mapping.ts';
import { getSkillPackage, putSkillPackage } from './skill-package-store.ts';

/**
 * SkillRepository: the only module with SQL for `skills` and `skill_revisions`.
 * `install` is the only writer of revisions: validation (before the transaction — it is pure),
 * then, in one short transaction, the identity row (created or locked FOR UPDATE), the source,
 * compare-and-swap and uniqueness checks, the next revision number, the archive and the row.
 */
export interface InstallOptions {
  source: SkillSource;
  /** Compare-and-swap on the skill's latest revision; 0 means "create: no active revision may exist". */
  expectedRevision?: number;
  authoredBy?: AuthoringContext;
  /**
   * Runs inside the install transaction once the new revision's rows are written, so a caller's
   * own rows (a procedure, a pass's install mark) commit or roll back with the revision.
   * Not called when an agent install replays an invocation already recorded.
   */
  inTransaction?: (client: pg.PoolClient, installed: SkillRevision) => Promise<void>;
}

/** What an install did: the CLI and the API say "unchanged" and "version defaulted" from it. */
export interface InstalledPackage {
  revision: SkillRevision;
  /**
   * `unchanged`: the package's archive equals the newest active revision's byte for byte, so
   * nothing was written and `revision` is that revision. Only operator and builtin installs are
   * compared: an agent's install is a governed invocation that records a revision of its own.
   */
  outcome: 'installed' | 'unchanged';
  /** The SKILL.md named no version: the revision's is 1.0.0, or the next patch after the skill's latest revision's. */
  versionDefaulted: boolean;
}

export interface ArchiveOptions {
  archivedByInvocationId?: string;
  archiveIdempotencyKey?: string;
}

export interface SkillRepository {
  install(tenantId: string, skillPackage: SkillPackage, options: InstallOptions): Promise<SkillRevision>;
  /** As install, saying whether anything was written and whether the version was defaulted. */
  installPackage(tenantId: string, skillPackage: SkillPackage, options: InstallOptions): Promise<InstalledPackage>;
  /** The named revision, or the active one for a ref without a revision; undefined when there is none. */
  findRevision(tenantId: string, ref: SkillRef | string): Promise<SkillRevision | undefined>;
  /** As findRevision, but SkillNotFound when there is none. */
  resolve(tenantId: string, ref: SkillRef | string): Promise<SkillRevision>;
  /**
   * Each ref as findRevision finds it, in one statement and without body or package (what a
   * session's catalog needs): the result at each ref's index, undefined where there is none.
   */
  findCatalogRevisions(tenantId: string, refs: readonly SkillRef[]): Promise<(CatalogRevision | undefined)[]>;
  /** The last revision number handed out for the name (`skills.latest_revision`); 0 for a name never installed. */
  latestRevision(tenantId: string, name: string): Promise<number>;
  listActive(tenantId: string, limit: number): Promise<SkillRevision[]>;
  archive(tenantId: string, name: string, revision: number, options?: ArchiveOptions): Promise<SkillRevision>;
  /** The stored archive of a revision, re-hashed against its recorded content_sha256. */
  readArchive(tenantId: string, revision: SkillRevision): Promise<Uint8Array>;
  /** Re-read every pinned archive; SkillPinMismatch on any digest that differs. */
  verifyPins(tenantId: string, pins: readonly SkillPin[]): Promise<SkillRevision[]>;
}

/** The failure of a ref that finds no revision: why, by the kind of ref. */
export function refNotFound(ref: SkillRef): SkillNotFound {
  return new SkillNotFound(formatSkillRef(ref), ref.revision === null ? 'no active revision' : 'no such skill or revision');
}

/** A revision as a catalog entry shows it: no body, no package. */
export type CatalogRevision = Pick<SkillRevision, 'name' | 'revision' | 'contentSha256' | 'source' | 'trust' | 'manifest'>;

export interface SkillRepositoryDependencies {
  pool: pg.Pool;
  /** License recorded for a SKILL.md that names none (config SKILLSMITH_SKILL_LICENSE). */
  defaultLicense: string;
}

interface RevisionRow {
  id: string;
  skill_id: string;
  tenant_id: string;
  name: string;
  revision: number;
  manifest: SkillManifest;
  body: string;
  body_tokens: number;
  content_sha256: string;
  package_key: string;
  package_bytes: string;
  file_count: number;
  source: SkillSource;
  trust: TrustLevel;
  status: SkillStatus;
  authored_by_run_id: string | null;
  authored_by_principal_id: string | null;
  authored_by_invocation_id: string | null;
  authoring_idempotency_key: string | null;
  archived_by_invocation_id: string | null;
  archive_idempotency_key: string | null;
  created_at: Date;
}

const REVISION_COLUMNS = `r.id, r.skill_id, r.tenant_id, r.name, r.revision, r.manifest, r.body, r.body_tokens,
  r.content_sha256, r.package_key, r.package_bytes::text AS package_bytes, r.file_count, s.source, r.trust,
  r.status, r.authored_by_run_id, r.authored_by_principal_id, r.authored_by_invocation_id,
  r.authoring_idempotency_key, r.archived_by_invocation_id, r.archive_idempotency_key, r.created_at`;

function toRevision({
  authored_by_run_id: runId,
  authored_by_principal_id: principalId,
  authored_by_invocation_id: invocationId,
  authoring_idempotency_key: idempotencyKey,
  package_bytes: packageBytes,
  ...columns
}: RevisionRow): SkillRevision {
  const authoredBy =
    principalId !== null && invocationId !== null && idempotencyKey !== null ? { runId, principalId, invocationId, idempotencyKey } : null;
  return { ...mapRow(columns), packageBytes: Number(packageBytes), authoredBy };
}

async function selectRevision(db: Queryable, tenantId: string, name: string, revision: number | null): Promise<SkillRevision | undefined> {
  const result =
    revision === null
      ? await db.query<RevisionRow>(
          `SELECT ${REVISION_COLUMNS} FROM skill_revisions r JOIN skills s ON s.id = r.skill_id AND s.tenant_id = r.tenant_id
           WHERE r.tenant_id = $1 AND r.name = $2 AND r.status = 'active'
           ORDER BY r.revision DESC LIMIT 1`,
          [tenantId, name],
        )
      : await db.query<RevisionRow>(
          `SELECT ${REVISION_COLUMNS} FROM skill_revisions r JOIN skills s ON s.id = r.skill_id AND s.tenant_id = r.tenant_id
           WHERE r.tenant_id = $1 AND r.name = $2 AND r.revision = $3`,
          [tenantId, name, revision],
        );
  const row = result.rows[0];
  return row ? toRevision(row) : undefined;
}

function checkProvenance(options: InstallOptions): void {
  if (options.source === 'agent') {
    const parsed = authoringContextSchema.safeParse(options.authoredBy);
    if (!parsed.success) {
      throw new SkillProvenanceInvalid('an agent-authored skill requires authoredBy {runId, principalId, invocationId, idempotencyKey}');
    }
  } else if (options.authoredBy !== undefined) {
    throw new SkillProvenanceInvalid(`authoredBy is recorded only for source agent, not ${options.source}`);
  }
}

export function createSkillRepository({ pool, defaultLicense }: SkillRepositoryDependencies): SkillRepository {
  async function install(tenantId: string, skillPackage: SkillPackage, options: InstallOptions): Promise<SkillRevision> {
    return (await installPackage(tenantId, skillPackage, options)).revision;
  }

  async function installPackage(tenantId: string, skillPackage: SkillPackage, options: InstallOptions): Promise<InstalledPackage> {
    const source = skillSourceSchema.parse(options.source);
    if (source === 'mcp') throw new SkillSourceRefused(source);
    checkProvenance(options);
    const validated = validateSkillPackage(skillPackage, { defaultLicense });
    const archiveBytes = await createPackageArchive(skillPackage);
    const { versionDefaulted } = validated;
    let { manifest } = validated;
    const authoredBy = options.authoredBy ?? null;
    const installed = (revision: SkillRevision): InstalledPackage => ({ revision, outcome: 'installed', versionDefaulted });

    return withTransaction(pool, async (client) => {
      if (authoredBy !== null) {
        const replay = await client.query<{ name: string; revision: number }>(
          `SELECT name, revision FROM skill_revisions WHERE tenant_id = $1 AND authored_by_invocation_id = $2`,
          [tenantId, authoredBy.invocationId],
        );
        const previous = replay.rows[0];
        if (previous) {
          const existing = await selectRevision(client, tenantId, previous.name, previous.revision);
          if (existing) return installed(existing);
        }
      }
      await client.query(`INSERT INTO skills (tenant_id, name, source) VALUES ($1, $2, $3) ON CONFLICT (tenant_id, name) DO NOTHING`, [
        tenantId,
        manifest.name,
        source,
      ]);
      const identity = await client.query<{ id: string; source: SkillSource; latest_revision: number }>(
        `SELECT id, source, latest_revision FROM skills WHERE tenant_id = $1 AND name = $2 FOR UPDATE`,
        [tenantId, manifest.name],
      );
      const skill = identity.rows[0];
      if (!skill) throw new Error(`skill identity row for ${manifest.name} vanished inside its transaction`);
      if (skill.source !== source) throw new SkillSourceImmutable(manifest.name, skill.source, source);
      if (options.expectedRevision === 0) {
        const active = await client.query<{ revision: number }>(
          `SELECT revision FROM skill_revisions WHERE tenant_id = $1 AND skill_id = $2 AND status = 'active'
           ORDER BY revision DESC LIMIT 1`,
          [tenantId, skill.id],
        );
        const activeRevision = active.rows[0];
        if (activeRevision) throw new SkillNameNotUnique(manifest.name, activeRevision.revision);
      } else if (options.expectedRevision !== undefined && options.expectedRevision !== skill.latest_revision) {
        throw new SkillRevisionConflict(manifest.name, options.expectedRevision, skill.latest_revision);
      }
      if (source !== 'agent') {
        const newest = await selectRevision(client, tenantId, manifest.name, null);
        if (newest && newest.contentSha256 === contentSha256(archiveBytes))
          return { revision: newest, outcome: 'unchanged', versionDefaulted };
      }
      if (versionDefaulted && skill.latest_revision > 0) {
        const latest = await selectRevision(client, tenantId, manifest.name, skill.latest_revision);
        const next = latest ? semver.inc(latest.manifest.version, 'patch') : null;
        manifest = { ...manifest, version: next ?? DEFAULT_SKILL_VERSION };
        validateManifest(manifest, skillPackage.directoryName);
      }
      const revision = skill.latest_revision + 1;
      const stored = await putSkillPackage(client, tenantId, skill.id, revision, archiveBytes);
      await client.query(
        `INSERT INTO skill_revisions (tenant_id, skill_id, name, revision, version, description, required_tools,
           license, manifest, body, body_tokens, content_sha256, package_key, package_bytes, file_count, trust, status,
           authored_by_run_id, authored_by_principal_id, authored_by_invocation_id, authoring_idempotency_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'active', $17, $18, $19, $20)`,
        [
          tenantId,
          skill.id,
          manifest.name,
          revision,
          manifest.version,
          manifest.description,
          JSON.stringify(manifest.requiredTools),
          manifest.license,
          JSON.stringify(manifest),
          validated.body,
          validated.bodyTokens,
          stored.contentSha256,
          stored.key,
          validated.packageBytes,
          validated.fileCount,
          trustForSource(source),
          authoredBy?.runId ?? null,
          authoredBy?.principalId ?? null,
          authoredBy?.invocationId ?? null,
          authoredBy?.idempotencyKey ?? null,
        ],
      );
      await client.query(`UPDATE skills SET latest_revision = $3 WHERE tenant_id = $1 AND id = $2`, [tenantId, skill.id, revision]);
      const written = await selectRevision(client, tenantId, manifest.name, revision);
      if (!written) throw new Error(`revision ${manifest.name}@${revision} not readable after insert`);
      await options.inTransaction?.(client, written);
      return installed(written);
    });
  }

  async function findRevision(tenantId: string, ref: SkillRef | string): Promise<SkillRevision | undefined> {
    const parsed = typeof ref === 'string' ? parseSkillRef(ref) : ref;
    return selectRevision(pool, tenantId, parsed.name, parsed.revision);
  }

  async function resolve(tenantId: string, ref: SkillRef | string): Promise<SkillRevision> {
    const parsed = typeof ref === 'string' ? parseSkillRef(ref) : ref;
    const found = await findRevision(tenantId, parsed);
    if (!found) throw refNotFound(parsed);
    return found;
  }

  async function findCatalogRevisions(tenantId: string, refs: readonly SkillRef[]): Promise<(CatalogRevision | undefined)[]> {
    if (refs.length === 0) return [];
    // The rule of selectRevision for every ref at once: a revision number pins that revision, active
    // or not; none floats to the newest active one.
    const { rows } = await pool.query<{
      ord: number;
      name: string;
      revision: number;
      manifest: SkillManifest;
      content_sha256: string;
      source: SkillSource;
      trust: TrustLevel;
    }>(
      `SELECT DISTINCT ON (q.ord) q.ord::int AS ord, r.name, r.revision, r.manifest, r.content_sha256, s.source, r.trust
         FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS q(name, revision, ord)
         JOIN skill_revisions r ON r.tenant_id = $1 AND r.name = q.name
              AND CASE WHEN q.revision IS NULL THEN r.status = 'active' ELSE r.revision = q.revision END
         JOIN skills s ON s.id = r.skill_id AND s.tenant_id = r.tenant_id
        ORDER BY q.ord, r.revision DESC`,
      [tenantId, refs.map((ref) => ref.name), refs.map((ref) => ref.revision)],
    );
    const found: (CatalogRevision | undefined)[] = refs.map(() => undefined);
    for (const { ord, ...columns } of rows) found[ord - 1] = mapRow(columns);
    return found;
  }

  async function latestRevision(tenantId: string, name: string): Promise<number> {
    const result = await pool.query<{ latest_revision: number }>(`SELECT latest_revision FROM skills WHERE tenant_id = $1 AND name = $2`, [
      tenantId,
      name,
    ]);
    return result.rows[0]?.latest_revision ?? 0;
  }

  async function listActive(tenantId: string, limit: number): Promise<SkillRevision[]> {
    const result = await pool.query<RevisionRow>(
      `SELECT DISTINCT ON (r.name) ${REVISION_COLUMNS}
       FROM skill_revisions r JOIN skills s ON s.id = r.skill_id AND s.tenant_id = r.tenant_id
       WHERE r.tenant_id = $1 AND r.status = 'active'
       ORDER BY r.name, r.revision DESC
       LIMIT $2`,
      [tenantId, limit],
    );
    return result.rows.map(toRevision);
  }

  async function archive(tenantId: string, name: string, revision: number, options: ArchiveOptions = {}): Promise<SkillRevision> {
    const result = await pool.query<{ id: string }>(
      `UPDATE skill_revisions
       SET status = 'archived',
           archived_by_invocation_id = $4,
           archive_idempotency_key = $5
       WHERE tenant_id = $1 AND name = $2 AND revision = $3 AND status = 'active'
       RETURNING id`,
      [tenantId, name, revision, options.archivedByInvocationId ?? null, options.archiveIdempotencyKey ?? null],
    );
    const found = await selectRevision(pool, tenantId, name, revision);
    if (!found) throw new SkillNotFound(`${name}@${revision}`);
    if (result.rowCount === 0 && found.status !== 'archived') {
      throw new Error(`revision ${name}@${revision} could not be archived`);
    }
    return found;
  }

  async function readArchive(tenantId: string, revision: SkillRevision): Promise<Uint8Array> {
    const bytes = await getSkillPackage(pool, tenantId, revision.packageKey);
    const actual = contentSha256(bytes);
    if (actual !== revision.contentSha256) {
      throw new SkillPinMismatch({ name: revision.name, revision: revision.revision, contentSha256: revision.contentSha256 }, actual);
    }
    return bytes;
  }

  async function verifyPins(tenantId: string, pins: readonly SkillPin[]): Promise<SkillRevision[]> {
    const verified: SkillRevision[] = [];
    for (const pin of pins) {
      const revision = await resolve(tenantId, { name: pin.name, revision: pin.revision });
      const actual = contentSha256(await getSkillPackage(pool, tenantId, revision.packageKey));
      if (actual !== pin.contentSha256) throw new SkillPinMismatch(pin, actual);
      if (revision.contentSha256 !== pin.contentSha256) throw new SkillPinMismatch(pin, revision.contentSha256);
      verified.push(revision);
    }
    return verified;
  }

  return {
    install,
    installPackage,
    findRevision,
    resolve,
    findCatalogRevisions,
    latestRevision,
    listActive,
    archive,
    readArchive,
    verifyPins,
  };
}

export interface SkillRevisionCount {
  tenantId: string;
  name: string;
  /** Calendar month (UTC) the revisions were created in, `YYYY-MM`. */
  month: string;
  revisions: number;
  /** Of them, created in the trailing 30 days. */
  lastThirtyDays: number;
}

/** Revisions per skill per month (the 002 spec's churn figure), for one tenant or every tenant (`null`). */
export async function countSkillRevisionsByMonth(db: Queryable, tenantId: string | null): Promise<SkillRevisionCount[]> {
  const { rows } = await db.query<{ tenant_id: string; name: string; month: string; revisions: string; recent: string }>(
    `SELECT tenant_id, name, to_char(date_trunc('month', created_at AT TIME ZONE 'UTC'), 'YYYY-MM') AS month,
            count(*)::text AS revisions, count(*) FILTER (WHERE created_at > now() - interval '30 days')::text AS recent
       FROM skill_revisions WHERE ($1::text IS NULL OR tenant_id = $1)
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    [tenantId],
  );
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    name: row.name,
    month: row.month,
    revisions: Number(row.revisions),
    lastThirtyDays: Number(row.recent),
  }));
}
