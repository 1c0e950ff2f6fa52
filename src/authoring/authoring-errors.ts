import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * Named refusals of governed skill authoring. Each has a stable `name` a caller (the
 * activity layer, the HTTP API) can branch on; store errors (SkillRevisionConflict,
 * SkillNotFound, SkillValidationError subtypes) pass through unchanged.
 */

/** Why the policy stage (or the source / read-before-write rules) refused a write. */
export type AuthoringDenialReason = 'scope' | 'origin_trust' | 'source' | 'read_before_write' | 'review_archive';

export const SKILL_WRITE_SCOPE = 'skill.write';

export class SkillAuthoringDenied extends SkillsmithError {
  static override readonly code = 'SkillAuthoringDenied';
  static override readonly httpStatus = 403;
  constructor(
    readonly reason: AuthoringDenialReason,
    message: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(`skill_manage denied (${reason}): ${message}`);
  }
}

export class SkillAuthoringDisabled extends SkillsmithError {
  static override readonly code = 'SkillAuthoringDisabled';
  static override readonly httpStatus = 403;
  constructor() {
    super('skill authoring is disabled: set SKILLSMITH_AUTHORING_ENABLED=true to enable skill_manage');
  }
}

/** The same invocation id arrived again with different arguments: never deduplicated, never applied. */
export class SkillManageInvocationReused extends SkillsmithError {
  static override readonly code = 'SkillManageInvocationReused';
  static override readonly httpStatus = 409;
  constructor(
    readonly invocationId: string,
    readonly recordedArgumentSha256: string,
    readonly argumentSha256: string,
  ) {
    super(
      `invocation ${JSON.stringify(invocationId)} was already used with other arguments ` +
        `(sha256 ${recordedArgumentSha256.slice(0, 12)}…, now ${argumentSha256.slice(0, 12)}…); nothing written`,
    );
  }
}

export class SkillManageRequestInvalid extends SkillsmithError {
  static override readonly code = 'SkillManageRequestInvalid';
  static override readonly httpStatus = 400;
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`invalid skill_manage request at ${path || '(root)'}: ${reason}`);
  }
}

export class ApprovalNotFound extends SkillsmithError {
  static override readonly code = 'ApprovalNotFound';
  static override readonly httpStatus = 404;
  constructor(id: string) {
    super(`no approval ${JSON.stringify(id)} in this tenant`);
  }
}

export class ApprovalNotPending extends SkillsmithError {
  static override readonly code = 'ApprovalNotPending';
  static override readonly httpStatus = 409;
  constructor(
    id: string,
    readonly status: string,
  ) {
    super(`approval ${id} is ${status}, not pending; nothing changed`);
  }
}

export class ApprovalExpired extends SkillsmithError {
  static override readonly code = 'ApprovalExpired';
  static override readonly httpStatus = 409;
  constructor(id: string, ttlHours: number) {
    super(`approval ${id} is older than the approval TTL (${ttlHours} h) and has been marked expired; nothing installed`);
  }
}
