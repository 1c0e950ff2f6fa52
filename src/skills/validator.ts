import semver from 'semver';
import { readSkillDocument, renderMetadataBlock, type ParseSkillOptions, type SkillManifest } from './skill-format.ts';
import {
  checkMemberPath,
  PACKAGE_BYTE_LIMIT,
  PACKAGE_FILE_LIMIT,
  packageByteCount,
  SKILL_MANIFEST_PATH,
  type SkillPackage,
} from './skill-package.ts';
import { countTokens } from './token-count.ts';
import { unstorableTextReason } from '../input/storable-text.ts';
import { toolNameProblem } from '../input/tool-name.ts';
import {
  SkillBodyEmpty,
  SkillBodyTooLong,
  SkillDescriptionInvalid,
  SkillManifestInvalid,
  SkillMetadataTooLong,
  SkillNameDirectoryMismatch,
  SkillNameInvalid,
  SkillPackageMissingManifest,
  SkillPackageTooLarge,
  SkillPackageTooManyFiles,
  SkillRequiredToolsInvalid,
  SkillTextUnstorable,
  SkillVersionInvalid,
  refuseAll,
  SkillValidationError,
} from './validation-errors.ts';

/**
 * The 002 spec's validator table, in one place. Every rule but "unique among the tenant's
 * active skills" is checked here, on the package alone; that one needs the database and is
 * checked by the repository at install, raising `SkillNameNotUnique` from the same family.
 */
export const SKILL_NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
export const DESCRIPTION_CHARACTER_LIMIT = 500;
export const REQUIRED_TOOLS_LIMIT = 10;
export const BODY_TOKEN_LIMIT = 3000;
export const METADATA_TOKEN_LIMIT = 75;

export interface ValidatedSkill {
  manifest: SkillManifest;
  body: string;
  bodyTokens: number;
  metadataTokens: number;
  fileCount: number;
  packageBytes: number;
  /** The SKILL.md names no version: `manifest.version` is the default, for install to replace. */
  versionDefaulted: boolean;
}

/** Checks every manifest rule, refusing with all it broke; returns the metadata block's tokens. */
export function validateManifest(manifest: SkillManifest, directoryName: string): number {
  const problems: SkillValidationError[] = [];
  const metadataTokens = checkManifest(manifest, directoryName, problems);
  refuseAll(problems);
  return metadataTokens;
}

function checkManifest(manifest: SkillManifest, directoryName: string, problems: SkillValidationError[]): number {
  // The 002 pattern, plus the agentskills.io rule against consecutive hyphens, so every
  // installed skill also exports as a valid agentskills.io document.
  if (!SKILL_NAME_PATTERN.test(manifest.name) || manifest.name.includes('--')) {
    problems.push(new SkillNameInvalid(manifest.name));
  } else if (manifest.name !== directoryName) problems.push(new SkillNameDirectoryMismatch(manifest.name, directoryName));
  if (semver.valid(manifest.version) === null) problems.push(new SkillVersionInvalid(manifest.version));
  const descriptionLength = [...manifest.description].length;
  const hasLineBreak = /[\r\n\u2028\u2029\u0085]/.test(manifest.description);
  if (hasLineBreak || descriptionLength < 1 || descriptionLength > DESCRIPTION_CHARACTER_LIMIT) {
    problems.push(new SkillDescriptionInvalid(descriptionLength, hasLineBreak));
  }
  if (manifest.requiredTools.length > REQUIRED_TOOLS_LIMIT) {
    problems.push(new SkillRequiredToolsInvalid('count', manifest.requiredTools.length));
  }
  for (const tool of manifest.requiredTools) {
    const problem = toolNameProblem(tool);
    if (problem !== null) problems.push(new SkillRequiredToolsInvalid('tool_name', tool, problem));
  }
  if (manifest.license.trim().length === 0) problems.push(new SkillManifestInvalid('license', 'license is empty'));
  const metadataTokens = countTokens(renderMetadataBlock(manifest));
  if (metadataTokens > METADATA_TOKEN_LIMIT) problems.push(new SkillMetadataTooLong(metadataTokens));
  return metadataTokens;
}

export function validateBody(body: string): number {
  const problems: SkillValidationError[] = [];
  const bodyTokens = checkBody(body, problems);
  refuseAll(problems);
  return bodyTokens;
}

function checkBody(body: string, problems: SkillValidationError[]): number {
  const bodyTokens = countTokens(body);
  if (bodyTokens === 0) problems.push(new SkillBodyEmpty());
  if (bodyTokens > BODY_TOKEN_LIMIT) problems.push(new SkillBodyTooLong(bodyTokens));
  return bodyTokens;
}

/** Capture a check that throws its one error, so the package is still judged whole. */
function attempt(problems: SkillValidationError[], check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof SkillValidationError) problems.push(error);
    else throw error;
  }
}

/**
 * Validate a package against every package-local rule; returns what install records. A refusal
 * names every rule the package broke (`violations`), except what a missing or unreadable
 * SKILL.md leaves unknowable.
 */
export function validateSkillPackage(skillPackage: SkillPackage, options: ParseSkillOptions): ValidatedSkill {
  const problems: SkillValidationError[] = [];
  const fileCount = skillPackage.files.size;
  if (fileCount > PACKAGE_FILE_LIMIT) problems.push(new SkillPackageTooManyFiles(fileCount));
  const packageBytes = packageByteCount(skillPackage);
  if (packageBytes > PACKAGE_BYTE_LIMIT) problems.push(new SkillPackageTooLarge(packageBytes));
  for (const memberPath of skillPackage.files.keys()) attempt(problems, () => checkMemberPath(memberPath));
  const text = manifestText(skillPackage, problems);
  const parsed = text === undefined ? undefined : readSkillDocument(text, options, problems);
  if (!parsed) {
    refuseAll(problems);
    throw new Error('unreachable: an unreadable SKILL.md is always a problem');
  }
  const { manifest, body } = parsed;
  const metadataTokens = checkManifest(manifest, skillPackage.directoryName, problems);
  const bodyTokens = checkBody(body, problems);
  refuseAll(problems);
  return { manifest, body, bodyTokens, metadataTokens, fileCount, packageBytes, versionDefaulted: parsed.versionDefaulted };
}

function manifestText(skillPackage: SkillPackage, problems: SkillValidationError[]): string | undefined {
  const manifestBytes = skillPackage.files.get(SKILL_MANIFEST_PATH);
  if (manifestBytes === undefined) {
    problems.push(new SkillPackageMissingManifest(skillPackage.files.size));
    return undefined;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(manifestBytes);
  } catch {
    problems.push(new SkillManifestInvalid('SKILL.md', 'SKILL.md is not valid UTF-8'));
    return undefined;
  }
  // Its text and fields are stored in Postgres text columns: a NUL is refused here, by name.
  const unstorable = unstorableTextReason(text);
  if (unstorable !== null) {
    problems.push(new SkillTextUnstorable(SKILL_MANIFEST_PATH, unstorable));
    return undefined;
  }
  return text;
}
