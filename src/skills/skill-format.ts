import { Document, parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { refuseAll, SkillManifestInvalid, type SkillValidationError } from './validation-errors.ts';

/**
 * The one manifest model: the 002 spec's four advertised fields plus the license the
 * agentskills.io format carries. It is a parse of the front matter and holds nothing derived.
 */
export const skillManifestSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  requiredTools: z.array(z.string()),
  license: z.string(),
});
export type SkillManifest = z.infer<typeof skillManifestSchema>;

export interface ParsedSkillDocument {
  manifest: SkillManifest;
  /** The Markdown after the front matter, leading blank lines and trailing whitespace removed. */
  body: string;
  /**
   * True when the front matter names no version (agentskills.io does not require one): the
   * manifest then holds DEFAULT_SKILL_VERSION, and install picks the next one for the skill.
   */
  versionDefaulted: boolean;
}

export interface ParseSkillOptions {
  /** License recorded when the front matter names none. */
  defaultLicense: string;
}

export const DEFAULT_SKILL_LICENSE = 'Apache-2.0';
/** The version of a skill's first revision when its SKILL.md names none. */
export const DEFAULT_SKILL_VERSION = '1.0.0';

const stringList = z.array(z.string());

/**
 * The front matter as written on disk. Read with the YAML failsafe schema, every scalar is a
 * string, so `version: 1.0` stays "1.0" instead of becoming the number 1.
 * Accepted shapes: the agentskills.io one (metadata.version, metadata.required-tools as a
 * space-separated list), the 002 spec's (top-level version and required_tools list), and
 * the 000 spec's (metadata.gaia.tools_required list).
 */
const looseFrontMatterSchema = z.object({
  name: z.string(),
  description: z.string(),
  license: z.string().optional(),
  compatibility: z.string().optional(),
  'allowed-tools': z.string().optional(),
  version: z.string().optional(),
  required_tools: stringList.optional(),
  metadata: z.record(z.string(), z.union([z.string(), z.object({ tools_required: stringList.optional() }).strict()])).optional(),
});
const frontMatterSchema = looseFrontMatterSchema.strict();

const FRONT_MATTER_DELIMITER = /^---[ \t]*$/;

export function splitFrontMatter(text: string): { yamlText: string; rest: string } {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  if (!FRONT_MATTER_DELIMITER.test((lines[0] ?? '').replace(/\r$/, ''))) {
    throw new SkillManifestInvalid('front_matter', 'SKILL.md does not start with a --- line');
  }
  const closing = lines.findIndex((line, index) => index > 0 && FRONT_MATTER_DELIMITER.test(line.replace(/\r$/, '')));
  if (closing < 0) {
    throw new SkillManifestInvalid('front_matter', 'the front matter has no closing --- line');
  }
  return { yamlText: lines.slice(1, closing).join('\n'), rest: lines.slice(closing + 1).join('\n') };
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'front_matter' : path.map(String).join('.');
}

function pickVersion(frontMatter: z.infer<typeof frontMatterSchema>): string | undefined {
  const fromMetadata = frontMatter.metadata?.['version'];
  if (typeof fromMetadata === 'string') return fromMetadata;
  return frontMatter.version;
}

function pickRequiredTools(frontMatter: z.infer<typeof frontMatterSchema>): string[] {
  const fromMetadata = frontMatter.metadata?.['required-tools'];
  if (typeof fromMetadata === 'string') return fromMetadata.split(/\s+/).filter((tool) => tool.length > 0);
  if (frontMatter.required_tools !== undefined) return frontMatter.required_tools;
  const gaia = frontMatter.metadata?.['gaia'];
  if (typeof gaia === 'object' && gaia.tools_required !== undefined) return gaia.tools_required;
  return [];
}

/** Parse a SKILL.md document into the manifest and the body. Shape errors are SkillManifestInvalid, all at once. */
export function parseSkillDocument(text: string, options: ParseSkillOptions): ParsedSkillDocument {
  const problems: SkillValidationError[] = [];
  const parsed = readSkillDocument(text, options, problems);
  refuseAll(problems);
  return parsed!;
}

/**
 * As parseSkillDocument, but every shape problem goes to `problems`; the document is returned
 * whenever the fields can be read at all (an unknown key does not hide a bad name), so the
 * validator can judge the rest of it too.
 */
export function readSkillDocument(
  text: string,
  options: ParseSkillOptions,
  problems: SkillValidationError[],
): ParsedSkillDocument | undefined {
  let split: { yamlText: string; rest: string };
  try {
    split = splitFrontMatter(text);
  } catch (error) {
    problems.push(error as SkillManifestInvalid);
    return undefined;
  }
  let raw: unknown;
  try {
    raw = parseYaml(split.yamlText, { schema: 'failsafe', uniqueKeys: true, prettyErrors: false });
  } catch (error) {
    const reason = error instanceof YAMLParseError ? (error.message.split('\n')[0] ?? error.message) : String(error);
    problems.push(new SkillManifestInvalid('front_matter', `YAML does not parse: ${reason}`));
    return undefined;
  }
  const strict = frontMatterSchema.safeParse(raw ?? {});
  if (!strict.success) {
    for (const issue of strict.error.issues) problems.push(new SkillManifestInvalid(issuePath(issue.path), issue.message));
  }
  const loose = strict.success ? strict : looseFrontMatterSchema.safeParse(raw ?? {});
  if (!loose.success) return undefined;
  const frontMatter = loose.data;
  for (const [key, value] of Object.entries(frontMatter.metadata ?? {})) {
    if (typeof value !== 'string' && key !== 'gaia') {
      problems.push(new SkillManifestInvalid(`metadata.${key}`, 'metadata values must be strings'));
    }
  }
  const version = pickVersion(frontMatter);
  const manifest: SkillManifest = {
    name: frontMatter.name,
    version: version ?? DEFAULT_SKILL_VERSION,
    description: frontMatter.description,
    requiredTools: pickRequiredTools(frontMatter),
    license: frontMatter.license ?? options.defaultLicense,
  };
  return { manifest, body: split.rest.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd(), versionDefaulted: version === undefined };
}

/**
 * The canonical agentskills.io document: only the format's top-level keys, in the order
 * name, description, license, metadata; metadata in block style holding `version` and
 * (when there are any) `required-tools` as a space-separated list. Deterministic: the same
 * manifest and body always give the same text.
 */
export function serializeSkillDocument(manifest: SkillManifest, body: string): string {
  const metadata: Record<string, string> = { version: manifest.version };
  if (manifest.requiredTools.length > 0) metadata['required-tools'] = manifest.requiredTools.join(' ');
  const frontMatter = {
    name: manifest.name,
    description: manifest.description,
    license: manifest.license,
    metadata,
  };
  const yamlText = new Document(frontMatter).toString({
    lineWidth: 0,
    minContentWidth: 0,
    collectionStyle: 'block',
    defaultStringType: 'PLAIN',
  });
  return `---\n${yamlText}---\n\n${body.trimEnd()}\n`;
}

/**
 * The advertised metadata block exactly as one catalog entry renders it — the text the
 * 75-token rule measures:
 *
 *   - name: <name>
 *     version: <version>
 *     description: <description>
 *     required_tools: <tool>, <tool>      ("none" when the list is empty)
 */
export function renderMetadataBlock(manifest: SkillManifest): string {
  const tools = manifest.requiredTools.length > 0 ? manifest.requiredTools.join(', ') : 'none';
  return [
    `- name: ${manifest.name}`,
    `  version: ${manifest.version}`,
    `  description: ${manifest.description}`,
    `  required_tools: ${tools}`,
  ].join('\n');
}
