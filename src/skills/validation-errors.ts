import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { TOOL_NAME_MAX_CHARACTERS } from '../input/tool-name.ts';

/**
 * Every way a skill package can be refused. Each failure is a named subclass of
 * `SkillValidationError` with a stable `name`, and carries the rule it broke, the field the
 * rule is about, what was measured and the limit, so a caller can branch on `name` and a
 * human reads "metadata block renders to 91 tokens, limit 75".
 */
export type MeasuredValue = string | number;

export interface SkillValidationDetails {
  rule: string;
  field: string;
  measured: MeasuredValue;
  limit: MeasuredValue | null;
}

export abstract class SkillValidationError extends SkillsmithError {
  static override readonly code: string = 'SkillValidationError';
  // A package that breaks a rule is unprocessable; a few rules override this (path escape, name clash).
  static override readonly httpStatus: number = 422;
  readonly rule: string;
  readonly field: string;
  readonly measured: MeasuredValue;
  readonly limit: MeasuredValue | null;
  /**
   * Every rule the package broke, this one first, when the validator refused it: a package is
   * judged whole so its author fixes everything in one round. Set by `refuseAll` (an own field
   * then, so the API's error details carry it); absent on errors raised one at a time.
   */
  declare violations?: SkillViolation[];

  protected constructor(message: string, details: SkillValidationDetails) {
    super(message);
    this.rule = details.rule;
    this.field = details.field;
    this.measured = details.measured;
    this.limit = details.limit;
  }
}

/** One broken rule, as `details.violations` lists it. */
export interface SkillViolation extends SkillValidationDetails {
  code: string;
  message: string;
}

function violationOf(error: SkillValidationError): SkillViolation {
  return { code: error.code, rule: error.rule, field: error.field, measured: error.measured, limit: error.limit, message: error.message };
}

/**
 * Nothing for no errors; else the first error (its code and status answer for the package),
 * carrying every violation and, when there are several, a message that lists them all.
 */
export function refuseAll(errors: readonly SkillValidationError[]): void {
  const [first] = errors;
  if (!first) return;
  const violations = errors.map(violationOf);
  if (violations.length > 1) {
    first.message = `${violations.length} problems: ${violations.map((violation) => violation.message).join('; ')}`;
  }
  first.violations = violations;
  throw first;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}

export class SkillManifestInvalid extends SkillValidationError {
  static override readonly code = 'SkillManifestInvalid';
  constructor(field: string, reason: string, measured: MeasuredValue = reason) {
    super(`SKILL.md front matter is invalid at ${field}: ${reason}`, { rule: 'manifest.shape', field, measured, limit: null });
  }
}

export class SkillNameInvalid extends SkillValidationError {
  static override readonly code = 'SkillNameInvalid';
  constructor(skillName: string) {
    super(`name ${quote(skillName)} does not match [a-z0-9]([a-z0-9-]{0,62}[a-z0-9])? without consecutive hyphens`, {
      rule: 'name.pattern',
      field: 'name',
      measured: skillName,
      limit: '[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?',
    });
  }
}

export class SkillNameDirectoryMismatch extends SkillValidationError {
  static override readonly code = 'SkillNameDirectoryMismatch';
  constructor(skillName: string, directoryName: string) {
    super(`name ${quote(skillName)} does not equal the directory name ${quote(directoryName)}`, {
      rule: 'name.directory',
      field: 'name',
      measured: skillName,
      limit: directoryName,
    });
  }
}

export class SkillNameNotUnique extends SkillValidationError {
  static override readonly code = 'SkillNameNotUnique';
  static override readonly httpStatus = 409;
  constructor(skillName: string, activeRevision: number) {
    super(`name ${quote(skillName)} is not unique among the tenant's active skills (active revision ${activeRevision} exists)`, {
      rule: 'name.unique',
      field: 'name',
      measured: skillName,
      limit: null,
    });
  }
}

export class SkillVersionInvalid extends SkillValidationError {
  static override readonly code = 'SkillVersionInvalid';
  constructor(version: string) {
    super(`version ${quote(version)} does not parse as semver`, {
      rule: 'version.semver',
      field: 'version',
      measured: version,
      limit: 'semver',
    });
  }
}

export class SkillDescriptionInvalid extends SkillValidationError {
  static override readonly code = 'SkillDescriptionInvalid';
  constructor(length: number, hasLineBreak: boolean) {
    super(
      hasLineBreak
        ? `description contains a line break (${length} characters); it must be one line of 1 to 500 characters`
        : `description is ${length} characters, limit 1 to 500`,
      { rule: hasLineBreak ? 'description.single_line' : 'description.length', field: 'description', measured: length, limit: 500 },
    );
  }
}

export class SkillRequiredToolsInvalid extends SkillValidationError {
  static override readonly code = 'SkillRequiredToolsInvalid';
  /** `problem`: for a tool name, why it is not one (the shared tool-name rule's reason, which quotes it). */
  constructor(reason: 'count' | 'tool_name', measured: MeasuredValue, problem?: string) {
    super(
      reason === 'count'
        ? `required_tools has ${measured} entries, limit 10`
        : `required_tools entry refused: ${problem ?? quote(String(measured))}`,
      {
        rule: reason === 'count' ? 'required_tools.count' : 'required_tools.tool_name',
        field: 'required_tools',
        measured,
        limit: reason === 'count' ? 10 : `1-${TOOL_NAME_MAX_CHARACTERS} printable characters, no whitespace`,
      },
    );
  }
}

export class SkillBodyEmpty extends SkillValidationError {
  static override readonly code = 'SkillBodyEmpty';
  constructor() {
    super('body is 0 tokens after front matter, limit 1 to 3000', { rule: 'body.tokens', field: 'body', measured: 0, limit: 3000 });
  }
}

export class SkillBodyTooLong extends SkillValidationError {
  static override readonly code = 'SkillBodyTooLong';
  constructor(tokens: number) {
    super(`body is ${tokens} tokens after front matter, limit 3000`, { rule: 'body.tokens', field: 'body', measured: tokens, limit: 3000 });
  }
}

export class SkillMetadataTooLong extends SkillValidationError {
  static override readonly code = 'SkillMetadataTooLong';
  constructor(tokens: number) {
    super(`metadata block renders to ${tokens} tokens, limit 75`, {
      rule: 'metadata.tokens',
      field: 'metadata',
      measured: tokens,
      limit: 75,
    });
  }
}

export class SkillPackageTooManyFiles extends SkillValidationError {
  static override readonly code = 'SkillPackageTooManyFiles';
  constructor(fileCount: number) {
    super(`package has ${fileCount} files, limit 64`, { rule: 'package.file_count', field: 'package', measured: fileCount, limit: 64 });
  }
}

export class SkillPackageTooLarge extends SkillValidationError {
  static override readonly code = 'SkillPackageTooLarge';
  constructor(totalBytes: number) {
    super(`package is ${totalBytes} bytes, limit 1048576 (1 MiB)`, {
      rule: 'package.bytes',
      field: 'package',
      measured: totalBytes,
      limit: 1_048_576,
    });
  }
}

export class SkillPackageSymlink extends SkillValidationError {
  static override readonly code = 'SkillPackageSymlink';
  constructor(memberPath: string) {
    super(`package member ${quote(memberPath)} is a symlink or link; links are refused`, {
      rule: 'package.no_symlink',
      field: 'package',
      measured: memberPath,
      limit: null,
    });
  }
}

export class SkillPackagePathEscape extends SkillValidationError {
  static override readonly code = 'SkillPackagePathEscape';
  static override readonly httpStatus = 400;
  constructor(memberPath: string, reason: string) {
    super(`package member path ${quote(memberPath)} escapes the package root (${reason})`, {
      rule: 'package.path_in_root',
      field: 'package',
      measured: memberPath,
      limit: null,
    });
  }
}

export class SkillPackageMissingManifest extends SkillValidationError {
  static override readonly code = 'SkillPackageMissingManifest';
  constructor(fileCount: number) {
    super(`package has no SKILL.md at its root (${fileCount} files)`, {
      rule: 'package.skill_md',
      field: 'SKILL.md',
      measured: fileCount,
      limit: null,
    });
  }
}

export class SkillPackageUnreadable extends SkillValidationError {
  static override readonly code = 'SkillPackageUnreadable';
  constructor(reason: string) {
    super(`package archive cannot be read: ${reason}`, { rule: 'package.archive', field: 'package', measured: reason, limit: null });
  }
}

/** A package's text that Postgres cannot store verbatim (NUL), or that is not Unicode (a lone surrogate). */
export class SkillTextUnstorable extends SkillValidationError {
  static override readonly code = 'SkillTextUnstorable';
  constructor(memberPath: string, reason: string) {
    super(`package member ${quote(memberPath)} ${reason}`, { rule: 'text.storable', field: memberPath, measured: reason, limit: null });
  }
}

/** A member with more than one name on disk: a hard link can pull in a file from outside the package. */
export class SkillPackageHardLink extends SkillValidationError {
  static override readonly code = 'SkillPackageHardLink';
  constructor(memberPath: string, linkCount: number) {
    super(`package member ${quote(memberPath)} is a hard link (${linkCount} names on disk); links are refused`, {
      rule: 'package.no_symlink',
      field: 'package',
      measured: linkCount,
      limit: 1,
    });
  }
}
