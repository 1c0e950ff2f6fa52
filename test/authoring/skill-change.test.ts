import { describe, expect, it } from 'vitest';
import { describeSkillChange } from '../../src/authoring/skill-change.ts';
import { encoder, skillPackage } from '../skills/skill-fixtures.ts';

describe('the approval diff', () => {
  it('shows a create as a unified diff from /dev/null with every member added', () => {
    const proposed = skillPackage({ name: 'fresh' }, { extraFiles: { 'references/a.md': 'a' } });
    const change = describeSkillChange('fresh', null, { revision: 1, skillPackage: proposed });
    expect(change.diff).toContain('--- /dev/null');
    expect(change.diff).toContain('+++ fresh@1/SKILL.md');
    expect(change.diff).toContain('+name: fresh');
    expect(change.memberChanges).toEqual({ added: ['SKILL.md', 'references/a.md'], removed: [], changed: [], unchanged: [] });
  });

  it('shows an edit as SKILL.md line changes plus added, removed, changed and unchanged members', () => {
    const current = skillPackage(
      { name: 'evolving' },
      { body: '# Steps\n\n1. Old step.', extraFiles: { 'references/kept.md': 'same', 'references/gone.md': 'x', 'data.json': '{}' } },
    );
    const proposed = skillPackage(
      { name: 'evolving', version: '1.1.0' },
      { body: '# Steps\n\n1. New step.', extraFiles: { 'references/kept.md': 'same', 'data.json': '{"a":1}', 'references/new.md': 'n' } },
    );
    const change = describeSkillChange('evolving', { revision: 4, skillPackage: current }, { revision: 5, skillPackage: proposed });
    expect(change.diff).toContain('--- evolving@4/SKILL.md\trevision 4');
    expect(change.diff).toContain('+++ evolving@5/SKILL.md\tproposed revision 5');
    expect(change.diff).toContain('-1. Old step.');
    expect(change.diff).toContain('+1. New step.');
    expect(change.diff).not.toContain('-name: evolving');
    expect(change.memberChanges).toEqual({
      added: ['references/new.md'],
      removed: ['references/gone.md'],
      changed: ['SKILL.md', 'data.json'],
      unchanged: ['references/kept.md'],
    });
  });

  it('reports a byte-identical package as all unchanged with an empty hunk list', () => {
    const same = skillPackage({ name: 'still' });
    const copy = {
      directoryName: 'still',
      files: new Map([['SKILL.md', encoder.encode(new TextDecoder().decode(same.files.get('SKILL.md')))]]),
    };
    const change = describeSkillChange('still', { revision: 1, skillPackage: same }, { revision: 2, skillPackage: copy });
    expect(change.memberChanges.unchanged).toEqual(['SKILL.md']);
    expect(change.diff).not.toContain('@@');
  });
});
