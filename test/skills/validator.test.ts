import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/skills/token-count.ts';
import {
  SkillBodyEmpty,
  SkillBodyTooLong,
  SkillDescriptionInvalid,
  SkillManifestInvalid,
  SkillMetadataTooLong,
  SkillNameDirectoryMismatch,
  SkillNameInvalid,
  SkillPackageMissingManifest,
  SkillPackagePathEscape,
  SkillPackageTooLarge,
  SkillPackageTooManyFiles,
  SkillRequiredToolsInvalid,
  SkillTextUnstorable,
  SkillValidationError,
  SkillVersionInvalid,
} from '../../src/skills/validation-errors.ts';
import { validateManifest, validateSkillPackage } from '../../src/skills/validator.ts';
import { manifest, rawPackage, skillPackage } from './skill-fixtures.ts';

const options = { defaultLicense: 'Apache-2.0' };

function rejection(run: () => unknown): SkillValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SkillValidationError);
    return error as SkillValidationError;
  }
  throw new Error('expected a SkillValidationError');
}

describe('validateSkillPackage: agentskills.io packages and every violation at once', () => {
  it('accepts a minimal agentskills.io SKILL.md (name + description, no metadata.version), defaulting the version', () => {
    const text = '---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\n---\n\n# PDF tools\n\nUse pdfplumber.\n';
    const validated = validateSkillPackage(rawPackage('pdf-tools', text), options);
    expect(validated).toMatchObject({ versionDefaulted: true, manifest: { name: 'pdf-tools', version: '1.0.0' } });
    const versioned = validateSkillPackage(skillPackage({ version: '2.1.0' }), options);
    expect(versioned).toMatchObject({ versionDefaulted: false, manifest: { version: '2.1.0' } });
  });

  it('reports every broken rule in one refusal: violations, in order, and a message listing them all', () => {
    const text = '---\nname: Bad_Name\ndescription: ""\nversion: v1\ncolour: blue\n---\n\n';
    const error = rejection(() => validateSkillPackage(rawPackage('elsewhere', text), options));
    expect(error.violations?.map((violation) => violation.code)).toEqual([
      'SkillManifestInvalid',
      'SkillNameInvalid',
      'SkillVersionInvalid',
      'SkillDescriptionInvalid',
      'SkillBodyEmpty',
    ]);
    expect(error.violations?.[0]).toMatchObject({ field: 'front_matter', rule: 'manifest.shape' });
    expect(error).toBeInstanceOf(SkillManifestInvalid);
    expect(error.message).toMatch(
      /^5 problems: SKILL.md front matter is invalid .*; name "Bad_Name" .*; version "v1" .*; description is 0 characters.*; body is 0 tokens/,
    );
  });

  it('a single broken rule keeps its own message, with itself as the one violation', () => {
    const error = rejection(() => validateSkillPackage(skillPackage({}, { directoryName: 'other-dir' }), options));
    expect(error.message).toBe('name "repository-analysis" does not equal the directory name "other-dir"');
    expect(error.violations).toEqual([expect.objectContaining({ code: 'SkillNameDirectoryMismatch', field: 'name' })]);
  });
});

describe('validateSkillPackage', () => {
  it('refuses a SKILL.md holding a NUL (its text is stored in Postgres text), naming the member and the rule', () => {
    const withNul = skillPackage({}, { body: '# Instructions\n\n1. Read\u0000 twice.' });
    const error = rejection(() => validateSkillPackage(withNul, options));
    expect(error).toBeInstanceOf(SkillTextUnstorable);
    expect(error).toMatchObject({ rule: 'text.storable', field: 'SKILL.md', measured: expect.stringContaining('NUL') });
  });

  it('accepts a valid package and reports what install records', () => {
    const validated = validateSkillPackage(skillPackage({}, { extraFiles: { 'references/a.md': 'x' } }), options);
    expect(validated.manifest.name).toBe('repository-analysis');
    expect(validated.fileCount).toBe(2);
    expect(validated.bodyTokens).toBe(countTokens('# Instructions\n\n1. Read.'));
    expect(validated.metadataTokens).toBeLessThanOrEqual(75);
  });

  it('accepts a body and a description that spell a special token (a skill about tokenizers), counting them as text', () => {
    const body = '# Instructions\n\n1. Stop the completion at `<|endoftext|>`.';
    const validated = validateSkillPackage(skillPackage({ description: 'Trim a completion at <|endoftext|>.' }, { body }), options);
    expect(validated.bodyTokens).toBe(countTokens(body));
    expect(validated.bodyTokens).toBeGreaterThan(countTokens('# Instructions\n\n1. Stop the completion at ``.'));
  });

  it("accepts the 002 spec's own example, folding its two-line plain description into one line", () => {
    const text = [
      '---',
      'name: repository-analysis',
      'version: 1.0.0',
      "description: Analyze a code repository's structure, dependencies,",
      '  and test coverage, and produce a written summary.',
      'required_tools:',
      '  - workspace.read_text',
      '  - workspace.list_files',
      '  - sandbox.run_command',
      '---',
      '',
      '# Instructions',
      '',
      '...',
    ].join('\n');
    const validated = validateSkillPackage(rawPackage('repository-analysis', text), options);
    expect(validated.manifest.description).toBe(
      "Analyze a code repository's structure, dependencies, and test coverage, and produce a written summary.",
    );
    expect(validated.manifest.requiredTools).toHaveLength(3);
  });

  it.each(['Upper', '-lead', 'trail-', 'a--b', 'a_b', 'a'.repeat(65), ''])('refuses the name %j as SkillNameInvalid', (name) => {
    const error = rejection(() => validateSkillPackage(skillPackage({ name }, { directoryName: name || 'x' }), options));
    expect(error).toBeInstanceOf(SkillNameInvalid);
    expect(error.name).toBe('SkillNameInvalid');
    expect(error.rule).toBe('name.pattern');
    expect(error.message).toContain(JSON.stringify(name));
  });

  it('accepts a 64-character name', () => {
    const name = `a${'b'.repeat(62)}c`;
    expect(validateSkillPackage(skillPackage({ name }), options).manifest.name).toBe(name);
  });

  it('refuses a name that differs from the directory name', () => {
    const error = rejection(() => validateSkillPackage(skillPackage({}, { directoryName: 'other-dir' }), options));
    expect(error).toBeInstanceOf(SkillNameDirectoryMismatch);
    expect(error.message).toContain('"other-dir"');
    expect(error.measured).toBe('repository-analysis');
  });

  it.each(['1.0', 'v1', 'latest', '1.0.0.0'])('refuses the version %j as SkillVersionInvalid', (version) => {
    const error = rejection(() => validateSkillPackage(skillPackage({ version }), options));
    expect(error).toBeInstanceOf(SkillVersionInvalid);
    expect(error.message).toContain(version);
  });

  it('refuses an empty, a 501-character and a multi-line description with the measured length', () => {
    const long = rejection(() => validateSkillPackage(skillPackage({ description: 'x'.repeat(501) }), options));
    expect(long).toBeInstanceOf(SkillDescriptionInvalid);
    expect(long.message).toContain('501 characters');
    expect(long.measured).toBe(501);
    const empty = rejection(() => validateSkillPackage(skillPackage({ description: '' }), options));
    expect(empty.message).toContain('0 characters');
    const multiLine = rejection(() => validateSkillPackage(skillPackage({ description: 'one\ntwo' }), options));
    expect(multiLine).toBeInstanceOf(SkillDescriptionInvalid);
    expect(multiLine.rule).toBe('description.single_line');
  });

  it('measures a 500-character description against the metadata rule, not the length rule', () => {
    const error = rejection(() => validateSkillPackage(skillPackage({ description: 'é'.repeat(500) }), options));
    expect(error).toBeInstanceOf(SkillMetadataTooLong);
  });

  it('refuses eleven required tools and a tool name with whitespace, a control character or 129 characters, quoting it', () => {
    const tools = Array.from({ length: 11 }, (_, index) => `t${index}`);
    const many = rejection(() => validateSkillPackage(skillPackage({ requiredTools: tools, description: 'x' }), options));
    expect(many).toBeInstanceOf(SkillRequiredToolsInvalid);
    expect(many.message).toContain('11 entries, limit 10');
    // metadata.required-tools is space-separated, so a spaced name reaches the rule through a manifest (or the legacy list).
    const spaced = rejection(() => validateManifest(manifest({ requiredTools: ['workspace read'] }), 'repository-analysis'));
    expect(spaced).toBeInstanceOf(SkillRequiredToolsInvalid);
    expect(spaced.message).toContain('"workspace read" has U+0020');
    expect(spaced.rule).toBe('required_tools.tool_name');
    expect(spaced.measured).toBe('workspace read');
    const control = rejection(() => validateSkillPackage(skillPackage({ requiredTools: ['read\u0000'] }), options));
    expect(control.message).toContain('"read\\u0000" has U+0000');
    const long = rejection(() => validateSkillPackage(skillPackage({ requiredTools: ['t'.repeat(129)] }), options));
    expect(long.message).toContain(`at most 128 characters; got 129: "${'t'.repeat(129)}"`);
  });

  it('accepts required tools named as MCP servers, OpenAPI operationIds and function-calling APIs name them', () => {
    const requiredTools = ['Get_Hotel_Reviews(Tips)', 'namespace/tool.name', 'a:b'];
    const validated = validateSkillPackage(skillPackage({ requiredTools }), options);
    expect(validated.manifest.requiredTools).toEqual(requiredTools);
  });

  it('refuses an empty body and a body over 3,000 tokens with the measured count', () => {
    const empty = rejection(() =>
      validateSkillPackage(rawPackage('a', '---\nname: a\ndescription: d\nversion: 1.0.0\n---\n   \n'), options),
    );
    expect(empty).toBeInstanceOf(SkillBodyEmpty);
    const body = 'word '.repeat(3001);
    const tokens = countTokens(body.trimEnd());
    const long = rejection(() => validateSkillPackage(skillPackage({}, { body }), options));
    expect(long).toBeInstanceOf(SkillBodyTooLong);
    expect(long.name).toBe('SkillBodyTooLong');
    expect(long.message).toBe(`body is ${tokens} tokens after front matter, limit 3000`);
    expect(long.measured).toBe(tokens);
    expect(long.limit).toBe(3000);
  });

  it('refuses a metadata block over 75 tokens with the measured count', () => {
    const description = 'Analyze repositories thoroughly and carefully, '.repeat(8).trim();
    const error = rejection(() => validateSkillPackage(skillPackage({ description }), options));
    expect(error).toBeInstanceOf(SkillMetadataTooLong);
    expect(error.message).toMatch(/^metadata block renders to \d+ tokens, limit 75$/);
    expect(Number(error.measured)).toBeGreaterThan(75);
  });

  it('refuses more than 64 files and more than 1 MiB', () => {
    const extraFiles: Record<string, string> = {};
    for (let index = 0; index < 64; index += 1) extraFiles[`references/${index}.md`] = 'x';
    const many = rejection(() => validateSkillPackage(skillPackage({}, { extraFiles }), options));
    expect(many).toBeInstanceOf(SkillPackageTooManyFiles);
    expect(many.message).toContain('65 files, limit 64');
    const large = rejection(() =>
      validateSkillPackage(skillPackage({}, { extraFiles: { 'references/big.bin': new Uint8Array(1_048_576) } }), options),
    );
    expect(large).toBeInstanceOf(SkillPackageTooLarge);
    expect(large.measured).toBeGreaterThan(1_048_576);
  });

  it.each(['../escape.md', '/etc/passwd', 'references\\x.md', 'a/../../b', 'nul\0.md', 'C:/x'])(
    'refuses the member path %j as SkillPackagePathEscape',
    (path) => {
      const error = rejection(() => validateSkillPackage(skillPackage({}, { extraFiles: { [path]: 'x' } }), options));
      expect(error).toBeInstanceOf(SkillPackagePathEscape);
      expect(error.message).toContain('escapes the package root');
    },
  );

  it('refuses a package without SKILL.md and a SKILL.md that is not UTF-8', () => {
    const missing = rejection(() =>
      validateSkillPackage({ directoryName: 'a', files: new Map([['README.md', new Uint8Array([1])]]) }, options),
    );
    expect(missing).toBeInstanceOf(SkillPackageMissingManifest);
    const binary = rejection(() =>
      validateSkillPackage({ directoryName: 'a', files: new Map([['SKILL.md', new Uint8Array([0xff, 0xfe])]]) }, options),
    );
    expect(binary).toBeInstanceOf(SkillManifestInvalid);
  });
});
