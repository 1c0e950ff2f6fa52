import type pg from 'pg';
import { createPackageArchive, contentSha256, readPackageArchive } from '../skills/package-archive.ts';
import { SkillRevisionConflict, SkillSourceImmutable } from '../skills/skill-errors.ts';
import { SKILL_MANIFEST_PATH, type SkillPackage } from '../skills/skill-package.ts';
import type { SkillRevision } from '../skills/skill-revision.ts';
import { validateSkillPackage } from '../skills/validator.ts';
import { insertApproval } from './approval-repository.ts';
import { withTransaction, type Queryable } from '../store/database.ts';
import { recordSkillEvent, type SkillEventInput } from '../store/skill-event-repository.ts';
import { recordSkillManageInvocation } from './skill-manage-invocation-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { SkillAuthoringDenied, SkillAuthoringDisabled } from './authoring-errors.ts';
import { describeSkillChange } from './skill-change.ts';
import {
  appliedEventKind,
  checkRequestText,
  decodeRequestPackage,
  parseManageInvocation,
  type ApprovalProfile,
  type InstallOperation,
  type ManageInvocation,
  type SkillManageContext,
  type SkillManageOutcome,
  type SkillManageRequest,
  type SkillManageResult,
} from './skill-manage-contract.ts';
import { checkInstalledByInvocation, findReplay, mayHaveRacedItself } from './skill-manage-idempotency.ts';
import type { RolloutGate } from '../rollout/rollout-gate.ts';
import {
  currentStateDenial,
  policyDenial,
  revisionConflict,
  sourceDenial,
  type AuthoringDenial,
  type RevisionConflict,
} from './skill-manage-policy.ts';

/**
 * skill_manage — the capability tool (registry name `skill.manage`, scope `skill.write`,
 * CONDITIONALLY_IDEMPOTENT) through which an agent creates, edits, patches and archives
 * its own skills, per the 002 spec. `manage` runs these steps in order:
 *
 * 1. Policy (skill-manage-policy.ts), before anything is read or written: authoring enabled
 *    platform-wide and activated for the tenant (the rollout gate, src/rollout/rollout-gate.ts);
 *    scope `skill.write` by exact string equality; origin trust at least USER; a background
 *    review cannot archive.
 * 2. Idempotency (skill-manage-idempotency.ts): key = invocation id + canonical argument sha256.
 *    The same invocation with the same arguments replays its recorded result; with other
 *    arguments it is refused.
 * 3. Source and read-before-write: edit/patch/archive only for `agent` skills; in a review,
 *    edit/patch only of a skill loaded at its current revision.
 * 4. `expectedRevision` compare-and-swap (again, atomically, inside the repository's install).
 * 5. Approval: under the `skill_authoring` profile, create/edit/patch raise a pending
 *    SKILL_AUTHORING approval carrying the package and a diff; nothing installs until approved.
 * 6. Apply: install (create/edit/patch) or archive, with the invocation record and its event
 *    in the same transaction.
 *
 * Every denial and every conflict is a `skill_events` row with its reason.
 */

export interface SkillManageDependencies {
  pool: pg.Pool;
  repository: SkillRepository;
  /** License recorded for a SKILL.md that names none (config SKILLSMITH_SKILL_LICENSE). */
  defaultLicense: string;
  settings: { enabled: boolean; approvalProfile: ApprovalProfile };
  /** The per-tenant rollout decision: authoring runs only for tenants activated for the current combination. */
  activation: Pick<RolloutGate, 'requireActive'>;
}

export interface SkillManage {
  manage(context: SkillManageContext, request: unknown): Promise<SkillManageResult>;
}

const encoder = new TextEncoder();

function eventBase({ context, request }: ManageInvocation): Pick<SkillEventInput, 'sessionId' | 'runId' | 'invocationId' | 'name'> {
  return { sessionId: context.sessionId ?? null, runId: context.runId, invocationId: context.invocationId, name: request.name };
}

/** Record the denial as an `authoring.denied` event, then refuse. */
export async function deny(db: Queryable, invocation: ManageInvocation, denial: AuthoringDenial): Promise<never> {
  const { context, request } = invocation;
  await recordSkillEvent(db, context.tenantId, {
    ...eventBase(invocation),
    kind: 'authoring.denied',
    reason: denial.reason,
    detail: { operation: request.operation, principalId: context.principalId, review: context.reviewRun !== undefined, ...denial.detail },
  });
  throw new SkillAuthoringDenied(denial.reason, denial.message, denial.detail);
}

/** Record the compare-and-swap failure as an `authoring.conflict` event, then refuse. */
export async function conflict(
  db: Queryable,
  invocation: ManageInvocation,
  { expectedRevision, currentRevision }: RevisionConflict,
): Promise<never> {
  const { context, request } = invocation;
  await recordSkillEvent(db, context.tenantId, {
    ...eventBase(invocation),
    kind: 'authoring.conflict',
    revision: currentRevision,
    reason: 'expected_revision',
    detail: { operation: request.operation, expectedRevision, currentRevision },
  });
  throw new SkillRevisionConflict(request.name, expectedRevision, currentRevision);
}

/** The invocation's idempotency record and its event, written in the transaction of the effect. */
async function recordEffect(
  client: pg.PoolClient,
  invocation: ManageInvocation,
  outcome: SkillManageOutcome,
  event: SkillEventInput,
): Promise<void> {
  const { context, request } = invocation;
  await recordSkillManageInvocation(client, {
    tenantId: context.tenantId,
    invocationId: context.invocationId,
    argumentSha256: invocation.argumentSha256,
    operation: request.operation,
    skillName: request.name,
    result: outcome,
  });
  await recordSkillEvent(client, context.tenantId, event);
}

export function createSkillManage(dependencies: SkillManageDependencies): SkillManage {
  const { pool, repository, defaultLicense, settings, activation } = dependencies;

  /** A write refused on a race: a retry of this invocation may have won; otherwise record why. */
  async function afterRace(invocation: ManageInvocation, error: unknown): Promise<SkillManageResult> {
    if (mayHaveRacedItself(error)) {
      const raced = await findReplay(pool, invocation);
      if (raced) return raced;
    }
    if (error instanceof SkillRevisionConflict) return conflict(pool, invocation, error);
    if (error instanceof SkillSourceImmutable) return deny(pool, invocation, sourceDenial(invocation.request.name, error.existingSource));
    throw error;
  }

  /** Apply an archive: the repository marks the revision archived, then the effect is recorded. */
  async function archive(invocation: ManageInvocation, expectedRevision: number): Promise<SkillManageResult> {
    const { context, request } = invocation;
    let archived: SkillRevision;
    try {
      archived = await repository.archive(context.tenantId, request.name, expectedRevision, {
        archivedByInvocationId: context.invocationId,
        archiveIdempotencyKey: invocation.idempotencyKey,
      });
    } catch (error) {
      return afterRace(invocation, error);
    }
    if (archived.archivedByInvocationId !== context.invocationId) {
      // Archived by someone else between our read and our write.
      const now = await repository.findRevision(context.tenantId, { name: request.name, revision: null });
      return conflict(pool, invocation, { expectedRevision, currentRevision: now?.revision ?? 0 });
    }
    const outcome: SkillManageOutcome = { status: 'archived', operation: 'archive', name: request.name, revision: archived.revision };
    try {
      await withTransaction(pool, (client) =>
        recordEffect(client, invocation, outcome, {
          ...eventBase(invocation),
          kind: appliedEventKind('archive'),
          revision: archived.revision,
          detail: { operation: 'archive', principalId: context.principalId },
        }),
      );
    } catch (error) {
      return afterRace(invocation, error);
    }
    return { ...outcome, replayed: false };
  }

  /** The package the request proposes: a patch carries every member of the active revision forward. */
  async function proposedPackage(
    tenantId: string,
    request: Exclude<SkillManageRequest, { operation: 'archive' }>,
    active: SkillRevision | undefined,
  ): Promise<SkillPackage> {
    if (request.operation !== 'patch') return decodeRequestPackage(request.name, request.package.files);
    // currentStateDenial has refused a patch without an active revision.
    const current = await readPackageArchive(await repository.readArchive(tenantId, active!), request.name);
    current.files.set(SKILL_MANIFEST_PATH, encoder.encode(request.skillMd));
    return current;
  }

  /** Approval: raise a pending SKILL_AUTHORING approval with the package and its diff; nothing installs. */
  async function requestApproval(
    invocation: ManageInvocation,
    operation: InstallOperation,
    skillPackage: SkillPackage,
    active: SkillRevision | undefined,
    revisions: { current: number; proposed: number },
  ): Promise<SkillManageResult> {
    const { context, request } = invocation;
    const archiveBytes = await createPackageArchive(skillPackage);
    const currentPackage =
      active === undefined ? undefined : await readPackageArchive(await repository.readArchive(context.tenantId, active), request.name);
    const change = describeSkillChange(
      request.name,
      active === undefined || currentPackage === undefined ? null : { revision: active.revision, skillPackage: currentPackage },
      { revision: revisions.proposed, skillPackage },
    );
    try {
      const outcome = await withTransaction(pool, async (client) => {
        const approval = await insertApproval(client, context.tenantId, {
          operation,
          skillName: request.name,
          currentRevision: revisions.current,
          proposedRevision: revisions.proposed,
          packageArchive: archiveBytes,
          packageSha256: contentSha256(archiveBytes),
          diff: change.diff,
          memberChanges: change.memberChanges,
          requestedByPrincipalId: context.principalId,
          requestedByRunId: context.runId,
          toolInvocationId: context.invocationId,
          idempotencyKey: invocation.idempotencyKey,
        });
        const pending: SkillManageOutcome = {
          status: 'pending_approval',
          operation,
          name: request.name,
          approvalId: approval.id,
          currentRevision: revisions.current,
          proposedRevision: revisions.proposed,
        };
        await recordEffect(client, invocation, pending, {
          ...eventBase(invocation),
          kind: 'approval.requested',
          revision: revisions.proposed,
          detail: { approvalId: approval.id, operation, currentRevision: revisions.current, proposedRevision: revisions.proposed },
        });
        return pending;
      });
      return { ...outcome, replayed: false };
    } catch (error) {
      return afterRace(invocation, error);
    }
  }

  /** Apply an install through the repository (the single writer), recording the effect in its transaction. */
  async function install(
    invocation: ManageInvocation,
    operation: InstallOperation,
    skillPackage: SkillPackage,
    expectedRevision: number,
  ): Promise<SkillManageResult> {
    const { context, request } = invocation;
    let installed: SkillRevision;
    let wrote = false;
    try {
      installed = await repository.install(context.tenantId, skillPackage, {
        source: 'agent',
        expectedRevision,
        authoredBy: {
          runId: context.runId,
          principalId: context.principalId,
          invocationId: context.invocationId,
          idempotencyKey: invocation.idempotencyKey,
        },
        inTransaction: async (client, revision) => {
          wrote = true;
          await recordEffect(
            client,
            invocation,
            { status: 'installed', operation, name: request.name, revision: revision.revision, contentSha256: revision.contentSha256 },
            {
              ...eventBase(invocation),
              kind: appliedEventKind(operation),
              revision: revision.revision,
              detail: { operation, principalId: context.principalId, contentSha256: revision.contentSha256 },
            },
          );
        },
      });
    } catch (error) {
      return afterRace(invocation, error);
    }
    checkInstalledByInvocation(installed, invocation);
    return {
      status: 'installed',
      operation,
      name: request.name,
      revision: installed.revision,
      contentSha256: installed.contentSha256,
      replayed: !wrote,
    };
  }

  return {
    async manage(rawContext, rawRequest) {
      if (!settings.enabled) throw new SkillAuthoringDisabled();
      const invocation = parseManageInvocation(rawContext, rawRequest);
      const { context, request } = invocation;
      await activation.requireActive(context.tenantId);

      const denied = policyDenial(context, request);
      if (denied) return deny(pool, invocation, denied);
      checkRequestText(request);

      const earlier = await findReplay(pool, invocation);
      if (earlier) return earlier;

      // The state read below may already hold this invocation's own concurrent delivery, committed
      // since findReplay: a taken name or a moved revision is then that delivery's, replayed, not refused.
      const active = await repository.findRevision(context.tenantId, { name: request.name, revision: null });
      let stateDenied: ReturnType<typeof currentStateDenial>;
      try {
        stateDenied = currentStateDenial(context, request, active);
      } catch (error) {
        // A create finds the name taken, an archive finds no active revision: by its twin, or not.
        const raced = await findReplay(pool, invocation);
        if (raced) return raced;
        throw error;
      }
      if (stateDenied) return deny(pool, invocation, stateDenied);

      if (request.operation === 'archive') {
        // currentStateDenial has refused an archive without an active revision.
        const archiveConflict = revisionConflict(request, active!.revision);
        if (archiveConflict) return (await findReplay(pool, invocation)) ?? conflict(pool, invocation, archiveConflict);
        return archive(invocation, request.expectedRevision);
      }

      const latest = await repository.latestRevision(context.tenantId, request.name);
      const editConflict = revisionConflict(request, latest);
      if (editConflict) return (await findReplay(pool, invocation)) ?? conflict(pool, invocation, editConflict);

      const skillPackage = await proposedPackage(context.tenantId, request, active);
      // Validate before anything is written: a bad package is a named SkillValidationError.
      validateSkillPackage(skillPackage, { defaultLicense });
      const expectedRevision = request.operation === 'create' ? 0 : request.expectedRevision;

      if (settings.approvalProfile === 'skill_authoring') {
        return requestApproval(invocation, request.operation, skillPackage, active, { current: expectedRevision, proposed: latest + 1 });
      }
      return install(invocation, request.operation, skillPackage, expectedRevision);
    },
  };
}
