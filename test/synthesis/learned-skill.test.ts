import { describe, expect, it } from 'vitest';
import { parseSkillDocument } from '../../src/skills/skill-format.ts';
import { checkAgentSkillsDocument } from '../../src/skills/agentskills-rules.ts';
import { DistillOutputMalformed, parseLearnedSkill } from '../../src/synthesis/learned-skill.ts';

const good = `---
name: triage-support-ticket
when_to_use: Triage an inbound support ticket end to end. Use when the user pastes a support ticket.
tools_required: [query_documents, read_file, remember]
---
# Triage a Support Ticket

1. Pull matching policy docs with \`query_documents\`.
2. Read any attached log with \`read_file\`.
3. Record the disposition with \`remember\`.

## Edge cases
- If no policy doc matches, escalate rather than guessing.
`;

describe('Skill.parse of distiller output', () => {
  it('maps the four learned fields onto the canonical document and injects license and version', () => {
    const learned = parseLearnedSkill(good, { license: 'MIT' });
    expect(learned.kind).toBe('skill');
    if (learned.kind !== 'skill') return;
    expect(learned.manifest).toEqual({
      name: 'triage-support-ticket',
      version: '1.0.0',
      description: 'Triage an inbound support ticket end to end. Use when the user pastes a support ticket.',
      requiredTools: ['query_documents', 'read_file', 'remember'],
      license: 'MIT',
    });
    expect(checkAgentSkillsDocument(learned.document, 'triage-support-ticket')).toEqual([]);
    const reread = parseSkillDocument(learned.document, { defaultLicense: 'other' });
    expect(reread.manifest).toEqual(learned.manifest);
    expect(reread.body).toContain('## Edge cases');
    expect(learned.document).not.toContain('when_to_use');
  });

  it('treats the literal SKIP as no skill', () => {
    expect(parseLearnedSkill('SKIP', { license: 'MIT' })).toEqual({ kind: 'skip' });
    expect(parseLearnedSkill('  SKIP\n', { license: 'MIT' })).toEqual({ kind: 'skip' });
  });

  it.each([
    ['prose instead of a document', 'Sure! Here is the skill you asked for: triage tickets carefully.', /neither SKIP nor a document/],
    [
      'bad YAML',
      good.replace('tools_required: [query_documents, read_file, remember]', 'tools_required: [query_documents, read_file'),
      /front matter does not parse/,
    ],
    ['a missing field', good.replace(/^when_to_use:.*\n/m, ''), /when_to_use/],
    ['an extra field the model must not emit', good.replace('---\n#', 'version: 2.0.0\n---\n#'), /front matter/],
    ['an invalid name', good.replace('name: triage-support-ticket', 'name: Triage Support Ticket'), /SkillNameInvalid/],
    ['no edge cases section', good.replace('## Edge cases', '## Notes'), /Edge cases/],
    ['no numbered steps', good.replace(/^\d\. /gm, '- '), /numbered steps/],
    ['a body over 3,000 tokens', good.replace('## Edge cases', `${'word '.repeat(3200)}\n\n## Edge cases`), /SkillBodyTooLong.*limit 3000/],
    [
      'a when_to_use with a line break',
      good.replace(/^when_to_use: (.*)$/m, 'when_to_use: |\n  $1\n  and a second line'),
      /SkillDescriptionInvalid/,
    ],
  ])('refuses %s with the reason, never repairing it', (_label, output, reason) => {
    const attempt = () => parseLearnedSkill(output, { license: 'MIT' });
    expect(attempt).toThrow(DistillOutputMalformed);
    expect(attempt).toThrow(reason);
  });
});
