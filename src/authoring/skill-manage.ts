import type pg from 'pg';
import { z } from 'zod';
import { createPackageArchive, contentSha256, readPackageArchive } from '../skills/package-archive.ts';
import { SkillNotFound, SkillRevisionConflict, SkillSourceImmutable } from '../skills/skill-errors.ts';
import { SKILL_MANIFEST_PATH, type SkillPackage } from '../skills/skill-package.ts';
import { SkillNameNotUnique } from '../skills/validation-errors.ts';
import { validateSkillPackage } from '../skills/validator.ts';
import { insertApproval } from '../store/approval-repository.ts';
import { withTransaction } from '../store/database.ts';
import { tenantIdSchema } from '../tenant.ts';
import { recordSkillEvent, type SkillEventInput } from '../store/skill-event-repository.ts';
import {
  findSkillManageInvocation,
  recordSkillManageInvocation,
  type SkillManageInvocation,
} from '../store/skill-manage-invocation-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import type { AuthoringContext, SkillRevision } from '../skills/skill-revision.ts';
import { canonicalArgumentSha256, skillManageIdempotencyKey } from './argument-hash.ts';
import {
  SKILL_WRITE_SCOPE,
  SkillAuthoringDenied,
  SkillAuthoringDisabled,
  SkillManageInvocationReused,
  SkillManageRequestInvalid,
  type AuthoringDenialReason,
} from './authoring-errors.ts';
import { describeSkillChange } from './skill-change.ts';

/**
 * skill_manage — the capability tool (registry name `skill.manage`, scope `skill.write`,
 * CONDITIONALLY_IDEMPOTENT) through which an agent creates, edits, patches and archives
 * its own skills, per the 002 spec:
 *
 * 1. Policy stage, before anything is read or written: authoring enabled; scope `skill.write`
 *    by exact string equality; origin trust at least USER; a background review cannot archive.
 * 2. Idempotency: key = invocation id + canonical argument sha256. The same invocation with
 *    the same arguments replays its recorded result; with other arguments it is refused.
 * 3. Source and read-before-write: edit/patch/archive only for `agent` skills; in a review,
 *    edit/patch only of a skill loaded at its current revision.
 * 4. `expectedRevision` compare-and-swap (again, atomically, inside the repository's install).
 * 5. Under the `skill_authoring` approval profile, create/edit/patch raise a pending
 *    SKILL_AUTHORING approval carrying the package and a diff; nothing installs until approved.
 *
 * Every denial and every conflict is a `skill_events` row with its reason.
 */

const skillNameSchema = z.string().min(1).max(64);
const revisionSchema = z.number().int().min(1);
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A package member: UTF-8 text as a string, or `{ base64 }` for any bytes. */
export const packageFileSchema = z.union([
  z.string(),
  z.object({ base64: z.string().regex(base64Pattern, 'standard base64 with padding') }).strict(),
]);

export const skillManagePackageSchema = z
  .object({ files: z.record(z.string().min(1), packageFileSchema) })
  .strict();

export const skillManageRequestSchema = z.discriminatedUnion('operation', [
  z.object({ operation: z.literal('create'), name: skillNameSchema, package: skillManagePackageSchema }).strict(),
  z
    .object({
      operation: z.literal('edit'),
      name: skillNameSchema,
      expectedRevision: revisionSchema,
      package: skillManagePackageSchema,
    })
    .strict(),
  z
    .object({
      operation: z.literal('patch'),
      name: skillNameSchema,
      expectedRevision: revisionSchema,
      /** The new SKILL.md text; every other member of the current revision is carried forward. */
      skillMd: z.string().min(1),
    })
    .strict(),
  z.object({ operation: z.literal('archive'), name: skillNameSchema, expectedRevision: revisionSchema }).strict(),
]);
export type SkillManageRequest = z.infer<typeof skillManageRequestSchema>;
export type SkillManageOperation = SkillManageRequest['operation'];

export const originTrustSchema = z.enum(['operator', 'user', 'untrusted']);
export type OriginTrust = z.infer<typeof originTrustSchema>;

export const skillManageContextSchema = z.object({
  tenantId: tenantIdSchema,
  principalId: z.string().min(1),
  scopes: z.array(z.string()),
  originTrust: originTrustSchema,
  /** What made the turn untrusted (e.g. "read a web page"), recorded on an origin_trust denial. */
  taint: z.string().optional(),
  runId: z.string().min(1),
  invocationId: z.string().min(1),
  sessionId: z.string().min(1).optional(),
  /** Set for a background review run: the skills it loaded, at the revision it loaded. */
  reviewRun: z.object({ loaded: z.map(z.string(), z.number().int()) }).optional(),
});
export type SkillManageContext = z.input<typeof skillManageContextSchema>;

export const skillManageOutcomeSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('installed'),
    operation: z.enum(['create', 'edit', 'patch']),
    name: z.string(),
    revision: z.number().int(),
    contentSha256: z.string(),
  }),
  z.object({ status: z.literal('archived'), operation: z.literal('archive'), name: z.string(), revision: z.number().int() }),
  z.object({
    status: z.literal('pending_approval'),
    operation: z.enum(['create', 'edit', 'patch']),
    name: z.string(),
    approvalId: z.string(),
    currentRevision: z.number().int(),
    proposedRevision: z.number().int(),
  }),
  /** The approval this invocation raised was closed without installing anything. */
  z.object({
    status: z.enum(['rejected', 'expired', 'conflicted']),
    operation: z.enum(['create', 'edit', 'patch']),
    name: z.string(),
    approvalId: z.string(),
  }),
]);
export type SkillManageOutcome = z.infer<typeof skillManageOutcomeSchema>;
/** `replayed`: this invocation had already taken effect and its recorded outcome is returned. */
export type SkillManageResult = SkillManageOutcome & { replayed: boolean };

export type ApprovalProfile = 'none' | 'skill_authoring';

export interface SkillManageDependencies {
  pool: pg.Pool;
  repository: SkillRepository;
  /** License recorded for a SKILL.md that names none (config SKILLSMITH_SKILL_LICENSE). */
  defaultLicense: string;
  settings: { enabled: boolean; approvalProfile: ApprovalProfile };
}

export interface SkillManage {
  manage(context: SkillManageContext, request: unknown): Promise<SkillManageResult>;
}

const TRUST_RANK: Record<OriginTrust, number> = { untrusted: 0, user: 1, operator: 2 };
const PAST_TENSE: Record<SkillManageOperation, string> = {
  create: 'created',
  edit: 'edited',
  patch: 'patched',
  archive: 'archived',
};
const encoder = new TextEncoder();

/** The package a create/edit request carries, with the skill name as its directory name. */
export function decodeRequestPackage(name: string, files: z.infer<typeof skillManagePackageSchema>['files']): SkillPackage {
  const decoded = new Map<string, Uint8Array>();
  for (const [path, content] of Object.entries(files)) {
    decoded.set(path, typeof content === 'string' ? encoder.encode(content) : new Uint8Array(Buffer.from(content.base64, 'base64')));
  }
  return { directoryName: name, files: decoded };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

export function createSkillManage(dependencies: SkillManageDependencies): SkillManage {
  const { pool, repository, defaultLicense, settings } = dependencies;

  async function activeRevision(tenantId: string, name: string): Promise<SkillRevision | null> {
    try {
      return await repository.resolve(tenantId, { name, revision: null });
    } catch (error) {
      if (error instanceof SkillNotFound) return null;
      throw error;
    }
  }

  /**
   * The last revision number handed out for the name — what the repository's compare-and-swap
   * compares against. It is the active revision unless newer revisions were archived since.
   */
  async function latestRevisionNumber(tenantId: string, name: string, active: SkillRevision | null): Promise<number> {
    let latest = active?.revision ?? 0;
    for (;;) {
      try {
        await repository.resolve(tenantId, { name, revision: latest + 1 });
        latest += 1;
      } catch (error) {
        if (error instanceof SkillNotFound) return latest;
        throw error;
      }
    }
  }

  return {
    async manage(rawContext, rawRequest) {
      if (!settings.enabled) throw new SkillAuthoringDisabled();
      const parsedContext = skillManageContextSchema.safeParse(rawContext);
      if (!parsedContext.success) {
        const issue = parsedContext.error.issues[0];
        throw new SkillManageRequestInvalid(`context.${issue?.path.join('.') ?? ''}`, issue?.message ?? 'invalid context');
      }
      const context = parsedContext.data;
      const parsedRequest = skillManageRequestSchema.safeParse(rawRequest);
      if (!parsedRequest.success) {
        const issue = parsedRequest.error.issues[0];
        throw new SkillManageRequestInvalid(issue?.path.join('.') ?? '', issue?.message ?? 'invalid request');
      }
      const request = parsedRequest.data;
      const { tenantId } = context;

      const eventBase = (): Pick<SkillEventInput, 'sessionId' | 'runId' | 'invocationId' | 'name'> => ({
        sessionId: context.sessionId ?? null,
        runId: context.runId,
        invocationId: context.invocationId,
        name: request.name,
      });

      async function deny(reason: AuthoringDenialReason, message: string, detail: Record<string, unknown> = {}): Promise<never> {
        const eventDetail = { operation: request.operation, principalId: context.principalId, review: context.reviewRun !== undefined, ...detail };
        await recordSkillEvent(pool, tenantId, { ...eventBase(), kind: 'authoring.denied', reason, detail: eventDetail });
        throw new SkillAuthoringDenied(reason, message, detail);
      }

      async function conflict(expectedRevision: number, currentRevision: number): Promise<never> {
        await recordSkillEvent(pool, tenantId, {
          ...eventBase(),
          kind: 'authoring.conflict',
          revision: currentRevision,
          reason: 'expected_revision',
          detail: { operation: request.operation, expectedRevision, currentRevision },
        });
        throw new SkillRevisionConflict(request.name, expectedRevision, currentRevision);
      }

      // 1. Policy stage: nothing has been read or written before these checks.
      if (!context.scopes.includes(SKILL_WRITE_SCOPE)) {
        await deny('scope', `the principal lacks the required scope ${SKILL_WRITE_SCOPE}`, {
          requiredScope: SKILL_WRITE_SCOPE,
          scopes: context.scopes,
        });
      }
      if (TRUST_RANK[context.originTrust] < TRUST_RANK.user) {
        await deny(
          'origin_trust',
          `origin trust ${context.originTrust} is below user${context.taint ? ` (${context.taint})` : ''}; skill writes are confined to trusted turns`,
          { originTrust: context.originTrust, taint: context.taint ?? null },
        );
      }
      if (context.reviewRun !== undefined && request.operation === 'archive') {
        await deny('review_archive', 'a background review cannot archive a skill');
      }

      // 2. Idempotency: a retried invocation replays; a reused invocation id is refused.
      const argumentSha256 = canonicalArgumentSha256(request);
      const idempotencyKey = skillManageIdempotencyKey(context.invocationId, argumentSha256);
      const replay = (recorded: SkillManageInvocation): SkillManageResult => {
        if (recorded.argumentSha256 !== argumentSha256) {
          throw new SkillManageInvocationReused(context.invocationId, recorded.argumentSha256, argumentSha256);
        }
        return { ...skillManageOutcomeSchema.parse(recorded.result), replayed: true };
      };
      const recordedReplay = async (): Promise<SkillManageResult | null> => {
        const recorded = await findSkillManageInvocation(pool, tenantId, context.invocationId);
        return recorded ? replay(recorded) : null;
      };
      const earlier = await recordedReplay();
      if (earlier) return earlier;

      const recordEffect = async (client: pg.PoolClient, outcome: SkillManageOutcome, event: SkillEventInput) => {
        await recordSkillManageInvocation(client, {
          tenantId,
          invocationId: context.invocationId,
          argumentSha256,
          operation: request.operation,
          skillName: request.name,
          result: outcome,
        });
        await recordSkillEvent(client, tenantId, event);
      };

      // A write that failed on a uniqueness or CAS race may have lost to a retry of this very invocation.
      const afterRace = async (error: unknown): Promise<SkillManageResult> => {
        if (isUniqueViolation(error) || error instanceof SkillRevisionConflict || error instanceof SkillNameNotUnique) {
          const raced = await recordedReplay();
          if (raced) return raced;
        }
        if (error instanceof SkillRevisionConflict) return conflict(error.expectedRevision, error.currentRevision);
        if (error instanceof SkillSourceImmutable) {
          return deny('source', `skill ${request.name} has source ${error.existingSource}; only agent skills are written by skill_manage`, {
            source: error.existingSource,
          });
        }
        throw error;
      };

      // 3. Current state, source rule, read-before-write, compare-and-swap.
      const active = await activeRevision(tenantId, request.name);
      if (request.operation === 'create') {
        if (active !== null && active.source !== 'agent') {
          await deny('source', `skill ${request.name} has source ${active.source}; only agent skills are written by skill_manage`, {
            source: active.source,
          });
        }
        if (active !== null) throw new SkillNameNotUnique(request.name, active.revision);
      } else {
        if (active === null) throw new SkillNotFound(request.name, 'no active revision');
        if (active.source !== 'agent') {
          await deny(
            'source',
            `skill ${request.name} has source ${active.source}; ${request.operation} is allowed only on agent skills`,
            { source: active.source },
          );
        }
        if (context.reviewRun !== undefined) {
          const loadedRevision = context.reviewRun.loaded.get(request.name);
          if (loadedRevision !== active.revision) {
            await deny(
              'read_before_write',
              `a background review may ${request.operation} ${request.name} only after loading its current revision ${active.revision}` +
                (loadedRevision === undefined ? ' (not loaded)' : ` (loaded revision ${loadedRevision})`),
              { loadedRevision: loadedRevision ?? null, currentRevision: active.revision },
            );
          }
        }
      }

      const authoredBy: AuthoringContext = {
        runId: context.runId,
        principalId: context.principalId,
        invocationId: context.invocationId,
        idempotencyKey,
      };

      if (request.operation === 'archive') {
        if (active === null) throw new SkillNotFound(request.name, 'no active revision');
        if (request.expectedRevision !== active.revision) return conflict(request.expectedRevision, active.revision);
        let archived: SkillRevision;
        try {
          archived = await repository.archive(tenantId, request.name, request.expectedRevision, {
            archivedByInvocationId: context.invocationId,
            archiveIdempotencyKey: idempotencyKey,
          });
        } catch (error) {
          return afterRace(error);
        }
        if (archived.archivedByInvocationId !== context.invocationId) {
          // Archived by someone else between our read and our write.
          const now = await activeRevision(tenantId, request.name);
          return conflict(request.expectedRevision, now?.revision ?? 0);
        }
        const outcome: SkillManageOutcome = { status: 'archived', operation: 'archive', name: request.name, revision: archived.revision };
        try {
          await withTransaction(pool, (client) =>
            recordEffect(client, outcome, {
              ...eventBase(),
              kind: 'authoring.archived',
              revision: archived.revision,
              detail: { operation: 'archive', principalId: context.principalId },
            }),
          );
        } catch (error) {
          return afterRace(error);
        }
        return { ...outcome, replayed: false };
      }

      const latest = await latestRevisionNumber(tenantId, request.name, active);
      if (request.operation !== 'create' && request.expectedRevision !== latest) {
        return conflict(request.expectedRevision, latest);
      }

      let skillPackage: SkillPackage;
      if (request.operation === 'patch') {
        const current = await readPackageArchive(await repository.readArchive(tenantId, active!), request.name);
        current.files.set(SKILL_MANIFEST_PATH, encoder.encode(request.skillMd));
        skillPackage = current;
      } else {
        skillPackage = decodeRequestPackage(request.name, request.package.files);
      }
      // Validate before anything is written: a bad package is a named SkillValidationError.
      validateSkillPackage(skillPackage, { defaultLicense });
      const expectedRevision = request.operation === 'create' ? 0 : request.expectedRevision;

      if (settings.approvalProfile === 'skill_authoring') {
        const proposedRevision = latest + 1;
        const archiveBytes = await createPackageArchive(skillPackage);
        const currentPackage =
          active === null ? null : await readPackageArchive(await repository.readArchive(tenantId, active), request.name);
        const change = describeSkillChange(
          request.name,
          active === null || currentPackage === null ? null : { revision: active.revision, skillPackage: currentPackage },
          { revision: proposedRevision, skillPackage },
        );
        try {
          const outcome = await withTransaction(pool, async (client) => {
            const approval = await insertApproval(client, tenantId, {
              operation: request.operation,
              skillName: request.name,
              currentRevision: expectedRevision,
              proposedRevision,
              packageArchive: archiveBytes,
              packageSha256: contentSha256(archiveBytes),
              diff: change.diff,
              memberChanges: change.memberChanges,
              requestedByPrincipalId: context.principalId,
              requestedByRunId: context.runId,
              toolInvocationId: context.invocationId,
              idempotencyKey,
            });
            const pending: SkillManageOutcome = {
              status: 'pending_approval',
              operation: request.operation,
              name: request.name,
              approvalId: approval.id,
              currentRevision: expectedRevision,
              proposedRevision,
            };
            await recordEffect(client, pending, {
              ...eventBase(),
              kind: 'approval.requested',
              revision: proposedRevision,
              detail: { approvalId: approval.id, operation: request.operation, currentRevision: expectedRevision, proposedRevision },
            });
            return pending;
          });
          return { ...outcome, replayed: false };
        } catch (error) {
          return afterRace(error);
        }
      }

      let installed: SkillRevision;
      let wrote = false;
      try {
        installed = await repository.install(tenantId, skillPackage, {
          source: 'agent',
          expectedRevision,
          authoredBy,
          inTransaction: async (client, revision) => {
            wrote = true;
            await recordEffect(
              client,
              {
                status: 'installed',
                operation: request.operation,
                name: request.name,
                revision: revision.revision,
                contentSha256: revision.contentSha256,
              },
              {
                ...eventBase(),
                kind: `authoring.${PAST_TENSE[request.operation]}`,
                revision: revision.revision,
                detail: { operation: request.operation, principalId: context.principalId, contentSha256: revision.contentSha256 },
              },
            );
          },
        });
      } catch (error) {
        return afterRace(error);
      }
      if (installed.authoredBy?.idempotencyKey !== idempotencyKey) {
        // The repository replayed an earlier revision of this invocation id made with other arguments.
        const recordedSha256 = installed.authoredBy?.idempotencyKey.split(':').pop() ?? '';
        throw new SkillManageInvocationReused(context.invocationId, recordedSha256, argumentSha256);
      }
      return {
        status: 'installed',
        operation: request.operation,
        name: request.name,
        revision: installed.revision,
        contentSha256: installed.contentSha256,
        replayed: !wrote,
      };
    },
  };
}
