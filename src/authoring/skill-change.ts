import { createTwoFilesPatch } from 'diff';
import type { MemberChanges } from './approval.ts';
import { SKILL_MANIFEST_PATH, type SkillPackage } from '../skills/skill-package.ts';

/**
 * What a reviewer reads on a SKILL_AUTHORING approval: the unified diff of SKILL.md between
 * the current revision and the proposed one (the `diff` package), and which package members
 * were added, removed, changed or carried forward unchanged.
 */
export interface SkillChange {
  diff: string;
  memberChanges: MemberChanges;
}

const decoder = new TextDecoder('utf-8');

function sameBytes(left: Uint8Array, right: Uint8Array): boolean {
  return Buffer.from(left).equals(Buffer.from(right));
}

export function describeSkillChange(
  name: string,
  current: { revision: number; skillPackage: SkillPackage } | null,
  proposed: { revision: number; skillPackage: SkillPackage },
): SkillChange {
  const before = current?.skillPackage.files.get(SKILL_MANIFEST_PATH);
  const after = proposed.skillPackage.files.get(SKILL_MANIFEST_PATH);
  const diff = createTwoFilesPatch(
    current ? `${name}@${current.revision}/${SKILL_MANIFEST_PATH}` : '/dev/null',
    `${name}@${proposed.revision}/${SKILL_MANIFEST_PATH}`,
    before ? decoder.decode(before) : '',
    after ? decoder.decode(after) : '',
    current ? `revision ${current.revision}` : 'no current revision',
    `proposed revision ${proposed.revision}`,
  );
  const memberChanges: MemberChanges = { added: [], removed: [], changed: [], unchanged: [] };
  const previousFiles = current?.skillPackage.files ?? new Map<string, Uint8Array>();
  for (const [path, content] of proposed.skillPackage.files) {
    const previous = previousFiles.get(path);
    if (previous === undefined) memberChanges.added.push(path);
    else if (sameBytes(previous, content)) memberChanges.unchanged.push(path);
    else memberChanges.changed.push(path);
  }
  for (const path of previousFiles.keys()) {
    if (!proposed.skillPackage.files.has(path)) memberChanges.removed.push(path);
  }
  for (const list of [memberChanges.added, memberChanges.removed, memberChanges.changed, memberChanges.unchanged]) list.sort();
  return { diff, memberChanges };
}
