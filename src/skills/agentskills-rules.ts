import { parse as parseYaml } from 'yaml';

/**
 * A checker of the agentskills.io specification's rules for SKILL.md
 * (https://agentskills.io/specification), independent of our own reader so it can judge what
 * our writer emits:
 * - the file starts with YAML front matter delimited by `---` lines, followed by Markdown;
 * - top-level keys are only name, description, license, compatibility, metadata, allowed-tools;
 * - name: required, 1–64 characters, lowercase letters, digits and hyphens, no leading,
 *   trailing or consecutive hyphens, and equal to the directory name;
 * - description: required, non-empty, at most 1024 characters;
 * - compatibility: optional, at most 500 characters;
 * - license, allowed-tools: optional strings;
 * - metadata: optional map from string keys to string values.
 */
export const AGENTSKILLS_TOP_LEVEL_KEYS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;

export interface AgentSkillsViolation {
  field: string;
  message: string;
}

const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function checkAgentSkillsDocument(text: string, directoryName: string): AgentSkillsViolation[] {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (!match) return [{ field: 'front_matter', message: 'missing or unterminated YAML front matter' }];
  let frontMatter: unknown;
  try {
    frontMatter = parseYaml(match[1] ?? '');
  } catch (error) {
    return [{ field: 'front_matter', message: `invalid YAML: ${String(error)}` }];
  }
  if (!isPlainObject(frontMatter)) return [{ field: 'front_matter', message: 'front matter is not a mapping' }];

  const violations: AgentSkillsViolation[] = [];
  const allowed: readonly string[] = AGENTSKILLS_TOP_LEVEL_KEYS;
  for (const key of Object.keys(frontMatter)) {
    if (!allowed.includes(key)) violations.push({ field: key, message: `unexpected top-level key ${key}` });
  }
  const { name, description, compatibility, license, metadata } = frontMatter;
  if (typeof name !== 'string' || name.length === 0) {
    violations.push({ field: 'name', message: 'name is required and must be a string' });
  } else {
    if (name.length > 64) violations.push({ field: 'name', message: `name is ${name.length} characters, max 64` });
    if (!NAME_PATTERN.test(name)) {
      violations.push({ field: 'name', message: 'name must be lowercase letters, digits and single inner hyphens' });
    }
    if (name !== directoryName) violations.push({ field: 'name', message: `name must equal directory ${directoryName}` });
  }
  if (typeof description !== 'string' || description.trim().length === 0) {
    violations.push({ field: 'description', message: 'description is required and must be non-empty' });
  } else if (description.length > 1024) {
    violations.push({ field: 'description', message: `description is ${description.length} characters, max 1024` });
  }
  if (compatibility !== undefined && (typeof compatibility !== 'string' || compatibility.length > 500)) {
    violations.push({ field: 'compatibility', message: 'compatibility must be a string of at most 500 characters' });
  }
  if (license !== undefined && typeof license !== 'string') {
    violations.push({ field: 'license', message: 'license must be a string' });
  }
  const allowedTools = frontMatter['allowed-tools'];
  if (allowedTools !== undefined && typeof allowedTools !== 'string') {
    violations.push({ field: 'allowed-tools', message: 'allowed-tools must be a space-separated string' });
  }
  if (metadata !== undefined) {
    if (!isPlainObject(metadata)) {
      violations.push({ field: 'metadata', message: 'metadata must be a mapping' });
    } else {
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== 'string') {
          violations.push({ field: `metadata.${key}`, message: 'metadata values must be strings' });
        }
      }
    }
  }
  return violations;
}
