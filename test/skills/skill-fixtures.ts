import type { SkillManifest } from '../../src/skills/skill-format.ts';
import { serializeSkillDocument } from '../../src/skills/skill-format.ts';
import type { SkillPackage } from '../../src/skills/skill-package.ts';

/** Small, deterministic skill packages for tests. */
export const encoder = new TextEncoder();

export function manifest(overrides: Partial<SkillManifest> = {}): SkillManifest {
  return {
    name: 'repository-analysis',
    version: '1.0.0',
    description: "Analyze a code repository's structure and produce a written summary.",
    requiredTools: ['workspace.read_text', 'sandbox.run_command'],
    license: 'Apache-2.0',
    ...overrides,
  };
}

export function skillPackage(
  overrides: Partial<SkillManifest> = {},
  options: { body?: string; directoryName?: string; extraFiles?: Record<string, string | Uint8Array> } = {},
): SkillPackage {
  const resolved = manifest(overrides);
  const files = new Map<string, Uint8Array>();
  files.set('SKILL.md', encoder.encode(serializeSkillDocument(resolved, options.body ?? '# Instructions\n\n1. Read.')));
  for (const [path, content] of Object.entries(options.extraFiles ?? {})) {
    files.set(path, typeof content === 'string' ? encoder.encode(content) : content);
  }
  return { directoryName: options.directoryName ?? resolved.name, files };
}

export function rawPackage(directoryName: string, skillMd: string): SkillPackage {
  return { directoryName, files: new Map([['SKILL.md', encoder.encode(skillMd)]]) };
}
