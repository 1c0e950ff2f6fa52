import { describe, expect, it } from 'vitest';
import { formatSkillRef, parseSkillRef, SkillRefInvalid } from '../../src/skills/skill-ref.ts';

describe('parseSkillRef', () => {
  it('parses a floating name and a pinned name@revision', () => {
    expect(parseSkillRef('repository-analysis')).toEqual({ name: 'repository-analysis', revision: null });
    expect(parseSkillRef('repository-analysis@7')).toEqual({ name: 'repository-analysis', revision: 7 });
  });

  it.each(['', 'Upper', 'a@0', 'a@-1', 'a@1.5', 'a@', '@3', 'a@@3', 'a@ 3', '../a'])('refuses %j with SkillRefInvalid', (text) => {
    expect(() => parseSkillRef(text)).toThrow(SkillRefInvalid);
  });

  it('formats back to the same text', () => {
    for (const text of ['a', 'a-b@12']) expect(formatSkillRef(parseSkillRef(text))).toBe(text);
  });
});
