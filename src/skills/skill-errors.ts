import type { SkillPin } from './skill-ref.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** Errors of the skill store that are not package validation failures. Each has a stable name. */
export class SkillNotFound extends SkillsmithError {
  static override readonly code = 'SkillNotFound';
  static override readonly httpStatus = 404;
  constructor(
    readonly ref: string,
    reason = 'no such skill or revision',
  ) {
    super(`skill ${JSON.stringify(ref)} not found: ${reason}`);
  }
}

export class SkillRevisionConflict extends SkillsmithError {
  static override readonly code = 'SkillRevisionConflict';
  static override readonly httpStatus = 409;
  constructor(
    readonly skillName: string,
    readonly expectedRevision: number,
    readonly currentRevision: number,
  ) {
    super(`skill ${JSON.stringify(skillName)} is at revision ${currentRevision}, expected revision ${expectedRevision}; nothing written`);
  }
}

export class SkillPinMismatch extends SkillsmithError {
  static override readonly code = 'SkillPinMismatch';
  static override readonly httpStatus = 409;
  constructor(
    readonly pin: SkillPin,
    readonly actualSha256: string,
  ) {
    super(`skill pin ${pin.name}@${pin.revision} expects content_sha256 ${pin.contentSha256}, stored archive hashes to ${actualSha256}`);
  }
}

export class SkillSourceRefused extends SkillsmithError {
  static override readonly code = 'SkillSourceRefused';
  static override readonly httpStatus = 409;
  constructor(readonly source: string) {
    super(`skills with source ${source} are read-only and are never written to the store`);
  }
}

export class SkillSourceImmutable extends SkillsmithError {
  static override readonly code = 'SkillSourceImmutable';
  static override readonly httpStatus = 409;
  constructor(
    readonly skillName: string,
    readonly existingSource: string,
    readonly requestedSource: string,
  ) {
    super(`skill ${JSON.stringify(skillName)} has source ${existingSource}; an install under source ${requestedSource} is refused`);
  }
}

export class SkillProvenanceInvalid extends SkillsmithError {
  static override readonly code = 'SkillProvenanceInvalid';
  constructor(message: string) {
    super(message);
  }
}
