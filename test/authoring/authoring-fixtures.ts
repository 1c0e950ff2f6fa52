import type { SkillManageContext } from '../../src/authoring/skill-manage-contract.ts';
import { serializeSkillDocument } from '../../src/skills/skill-format.ts';
import type { SkillPackage } from '../../src/skills/skill-package.ts';
import { manifest, skillPackage } from '../skills/skill-fixtures.ts';

/** Contexts and requests for skill_manage tests. */
const decoder = new TextDecoder('utf-8');

export function trustedContext(tenantId: string, invocationId: string, overrides: Partial<SkillManageContext> = {}): SkillManageContext {
  return {
    tenantId,
    principalId: 'principal-ada',
    scopes: ['session.write', 'skill.write'],
    originTrust: 'user',
    runId: `run-of-${invocationId}`,
    invocationId,
    ...overrides,
  };
}

/** A package as a skill_manage request carries it: member path → UTF-8 text. */
export function requestFiles(pkg: SkillPackage): Record<string, string> {
  return Object.fromEntries([...pkg.files].map(([path, bytes]) => [path, decoder.decode(bytes)]));
}

export function createRequest(name: string, options: { body?: string; version?: string; extraFiles?: Record<string, string> } = {}) {
  const pkg = skillPackage(
    { name, ...(options.version ? { version: options.version } : {}) },
    { ...(options.body ? { body: options.body } : {}), ...(options.extraFiles ? { extraFiles: options.extraFiles } : {}) },
  );
  return { operation: 'create' as const, name, package: { files: requestFiles(pkg) } };
}

export function skillMd(name: string, body: string, version = '1.1.0'): string {
  return serializeSkillDocument(manifest({ name, version }), body);
}
