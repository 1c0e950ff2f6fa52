import { SkillNotFound } from '../skills/skill-errors.ts';
import type { SkillRevision } from '../skills/skill-revision.ts';
import { SkillNameNotUnique } from '../skills/validation-errors.ts';
import { SKILL_WRITE_SCOPE, type AuthoringDenialReason } from './authoring-errors.ts';
import type { OriginTrust, ParsedSkillManageContext, SkillManageRequest } from './skill-manage-contract.ts';

/**
 * skill_manage's rules as pure decisions over what is already known: the policy stage (before
 * anything is read), the source and read-before-write rules (against the active revision) and
 * the expectedRevision compare-and-swap. Recording a denial or conflict is the caller's step.
 */
export interface AuthoringDenial {
  reason: AuthoringDenialReason;
  message: string;
  detail: Record<string, unknown>;
}

export interface RevisionConflict {
  expectedRevision: number;
  currentRevision: number;
}

const TRUST_RANK: Record<OriginTrust, number> = { untrusted: 0, user: 1, operator: 2 };

/** Whether `claimed` is a higher origin trust than `limit` (what a caller is configured to claim at most). */
export function originTrustExceeds(claimed: OriginTrust, limit: OriginTrust): boolean {
  return TRUST_RANK[claimed] > TRUST_RANK[limit];
}

/** Policy stage: scope `skill.write` by exact string equality, origin trust at least user, no archive from a review. */
export function policyDenial(context: ParsedSkillManageContext, request: SkillManageRequest): AuthoringDenial | undefined {
  if (!context.scopes.includes(SKILL_WRITE_SCOPE)) {
    return {
      reason: 'scope',
      message: `the principal lacks the required scope ${SKILL_WRITE_SCOPE}`,
      detail: { requiredScope: SKILL_WRITE_SCOPE, scopes: context.scopes },
    };
  }
  if (TRUST_RANK[context.originTrust] < TRUST_RANK.user) {
    return {
      reason: 'origin_trust',
      message: `origin trust ${context.originTrust} is below user${context.taint ? ` (${context.taint})` : ''}; skill writes are confined to trusted turns`,
      detail: { originTrust: context.originTrust, taint: context.taint ?? null },
    };
  }
  if (context.reviewRun !== undefined && request.operation === 'archive') {
    return { reason: 'review_archive', message: 'a background review cannot archive a skill', detail: {} };
  }
  return undefined;
}

/**
 * Source and read-before-write rules against the skill's active revision. A request that names
 * the wrong state throws the store's own error: create of a taken name SkillNameNotUnique,
 * edit/patch/archive of a name with no active revision SkillNotFound.
 */
export function currentStateDenial(
  context: ParsedSkillManageContext,
  request: SkillManageRequest,
  active: SkillRevision | undefined,
): AuthoringDenial | undefined {
  if (request.operation === 'create') {
    if (active === undefined) return undefined;
    if (active.source !== 'agent') return sourceDenial(request.name, active.source);
    throw new SkillNameNotUnique(request.name, active.revision);
  }
  if (active === undefined) throw new SkillNotFound(request.name, 'no active revision');
  if (active.source !== 'agent') {
    return {
      reason: 'source',
      message: `skill ${request.name} has source ${active.source}; ${request.operation} is allowed only on agent skills`,
      detail: { source: active.source },
    };
  }
  if (context.reviewRun !== undefined) {
    const loadedRevision = context.reviewRun.loaded.get(request.name);
    if (loadedRevision !== active.revision) {
      return {
        reason: 'read_before_write',
        message:
          `a background review may ${request.operation} ${request.name} only after loading its current revision ${active.revision}` +
          (loadedRevision === undefined ? ' (not loaded)' : ` (loaded revision ${loadedRevision})`),
        detail: { loadedRevision: loadedRevision ?? null, currentRevision: active.revision },
      };
    }
  }
  return undefined;
}

/** The denial a store refusal of the source rule becomes (the source changed between read and write). */
export function sourceDenial(name: string, existingSource: string): AuthoringDenial {
  return {
    reason: 'source',
    message: `skill ${name} has source ${existingSource}; only agent skills are written by skill_manage`,
    detail: { source: existingSource },
  };
}

/**
 * Compare-and-swap before anything is built: `currentRevision` is the active revision for an
 * archive, and for edit/patch the last revision handed out (`skills.latest_revision`, newer
 * than the active one when revisions were archived since). A create is checked by the store.
 */
export function revisionConflict(request: SkillManageRequest, currentRevision: number): RevisionConflict | undefined {
  if (request.operation === 'create' || request.expectedRevision === currentRevision) return undefined;
  return { expectedRevision: request.expectedRevision, currentRevision };
}
