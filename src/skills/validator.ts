import semver from 'semver';
import { parseSkillDocument, renderMetadataBlock, type ParseSkillOptions, type SkillManifest } from './skill-format.ts';
import {
  checkMemberPath,
  PACKAGE_BYTE_LIMIT,
  PACKAGE_FILE_LIMIT,
  packageByteCount,
  SKILL_MANIFEST_PATH,
  type SkillPackage,
} from './skill-package.ts';
import { countTokens } from './token-count.ts';
import { unstorableTextReason } from '../storable-text.ts';
import { toolNameProblem } from '../tool-name.ts';
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
}

export function validateManifest(manifest: SkillManifest, directoryName: string): number {
  // The 002 pattern, plus the agentskills.io rule against consecutive hyphens, so every
  // installed skill also exports as a valid agentskills.io document.
  if (!SKILL_NAME_PATTERN.test(manifest.name) || manifest.name.includes('--')) {
    throw new SkillNameInvalid(manifest.name);
  }
  if (manifest.name !== directoryName) throw new SkillNameDirectoryMismatch(manifest.name, directoryName);
  if (semver.valid(manifest.version) === null) throw new SkillVersionInvalid(manifest.version);
  const descriptionLength = [...manifest.description].length;
  const hasLineBreak = /[\r\n\u2028\u2029\u0085]/.test(manifest.description);
  if (hasLineBreak || descriptionLength < 1 || descriptionLength > DESCRIPTION_CHARACTER_LIMIT) {
    throw new SkillDescriptionInvalid(descriptionLength, hasLineBreak);
  }
  if (manifest.requiredTools.length > REQUIRED_TOOLS_LIMIT) {
    throw new SkillRequiredToolsInvalid('count', manifest.requiredTools.length);
  }
  for (const tool of manifest.requiredTools) {
    const problem = toolNameProblem(tool);
    if (problem !== null) throw new SkillRequiredToolsInvalid('tool_name', tool, problem);
  }
  if (manifest.license.trim().length === 0) throw new SkillManifestInvalid('license', 'license is empty');
  const metadataTokens = countTokens(renderMetadataBlock(manifest));
  if (metadataTokens > METADATA_TOKEN_LIMIT) throw new SkillMetadataTooLong(metadataTokens);
  return metadataTokens;
}

export function validateBody(body: string): number {
  const bodyTokens = countTokens(body);
  if (bodyTokens === 0) throw new SkillBodyEmpty();
  if (bodyTokens > BODY_TOKEN_LIMIT) throw new SkillBodyTooLong(bodyTokens);
  return bodyTokens;
}

/** Validate a package against every package-local rule; returns what install records. */
export function validateSkillPackage(skillPackage: SkillPackage, options: ParseSkillOptions): ValidatedSkill {
  const fileCount = skillPackage.files.size;
  if (fileCount > PACKAGE_FILE_LIMIT) throw new SkillPackageTooManyFiles(fileCount);
  const packageBytes = packageByteCount(skillPackage);
  if (packageBytes > PACKAGE_BYTE_LIMIT) throw new SkillPackageTooLarge(packageBytes);
  for (const memberPath of skillPackage.files.keys()) checkMemberPath(memberPath);
  const manifestBytes = skillPackage.files.get(SKILL_MANIFEST_PATH);
  if (manifestBytes === undefined) throw new SkillPackageMissingManifest(fileCount);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(manifestBytes);
  } catch {
    throw new SkillManifestInvalid('SKILL.md', 'SKILL.md is not valid UTF-8');
  }
  // Its text and fields are stored in Postgres text columns: a NUL is refused here, by name.
  const unstorable = unstorableTextReason(text);
  if (unstorable !== null) throw new SkillTextUnstorable(SKILL_MANIFEST_PATH, unstorable);
  const { manifest, body } = parseSkillDocument(text, options);
  const metadataTokens = validateManifest(manifest, skillPackage.directoryName);
  const bodyTokens = validateBody(body);
  return { manifest, body, bodyTokens, metadataTokens, fileCount, packageBytes };
}
