import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAgentSkillsDocument } from '../../src/skills/agentskills-rules.ts';
import { parseSkillDocument, renderMetadataBlock, serializeSkillDocument, type SkillManifest } from '../../src/skills/skill-format.ts';
import { SkillManifestInvalid } from '../../src/skills/validation-errors.ts';

const options = { defaultLicense: 'Apache-2.0' };

describe('parseSkillDocument', () => {
  it('reads the canonical agentskills.io shape', () => {
    const text = [
      '---',
      'name: repository-analysis',
      'description: Analyze a repository and write a summary.',
      'license: MIT',
      'compatibility: Needs a POSIX shell',
      'allowed-tools: Bash Read',
      'metadata:',
      '  version: 1.2.0',
      '  required-tools: workspace.read_text sandbox.run_command',
      '  author: ops',
      '---',
      '',
      '# Instructions',
      '',
      'Do the thing.',
      '',
    ].join('\n');
    expect(parseSkillDocument(text, options)).toEqual({
      manifest: {
        name: 'repository-analysis',
        version: '1.2.0',
        description: 'Analyze a repository and write a summary.',
        requiredTools: ['workspace.read_text', 'sandbox.run_command'],
        license: 'MIT',
      },
      body: '# Instructions\n\nDo the thing.',
      versionDefaulted: false,
    });
  });

  it("reads the 002 spec's legacy shape (top-level version and required_tools) with the default license", () => {
    const text = [
      '---',
      'name: repository-analysis',
      'version: 1.0.0',
      'description: Analyze a code repository.',
      'required_tools:',
      '  - workspace.read_text',
      '  - workspace.list_files',
      '---',
      '',
      '# Instructions',
    ].join('\n');
    expect(parseSkillDocument(text, options).manifest).toEqual({
      name: 'repository-analysis',
      version: '1.0.0',
      description: 'Analyze a code repository.',
      requiredTools: ['workspace.read_text', 'workspace.list_files'],
      license: 'Apache-2.0',
    });
  });

  it("reads the 000 spec's metadata.gaia.tools_required shape", () => {
    const text = [
      '---',
      'name: triage-support-ticket',
      'description: Triage an inbound support ticket end to end.',
      'license: MIT',
      'version: 1.0.0',
      'metadata:',
      '  gaia:',
      '    tools_required:',
      '      - query_documents',
      '      - read_file',
      '---',
      '# Triage',
    ].join('\n');
    expect(parseSkillDocument(text, options).manifest.requiredTools).toEqual(['query_documents', 'read_file']);
  });

  it('keeps a version such as 1.0 a string rather than a number', () => {
    const text = '---\nname: a\ndescription: d\nversion: 1.10\n---\nbody';
    expect(parseSkillDocument(text, options).manifest.version).toBe('1.10');
  });

  it('refuses a document without front matter and unknown keys with SkillManifestInvalid', () => {
    expect(() => parseSkillDocument('# just markdown', options)).toThrow(SkillManifestInvalid);
    expect(() => parseSkillDocument('---\nname: a\ndescription: d\nversion: 1.0.0\nowner: x\n---\nb', options)).toThrow(/owner/);
    expect(() => parseSkillDocument('---\nname: [a\n---\nb', options)).toThrow(/YAML/);
  });

  it('reads a document without a version (agentskills.io needs none) as the default version, and says so', () => {
    expect(parseSkillDocument('---\nname: a\ndescription: d\n---\nb', options)).toMatchObject({
      manifest: { version: '1.0.0' },
      versionDefaulted: true,
    });
  });
});

const toolName = fc.stringMatching(/^[a-z_][a-z0-9_]{0,12}(\.[a-z_][a-z0-9_]{0,12}){0,2}$/);
export const manifestArbitrary: fc.Arbitrary<SkillManifest> = fc.record({
  name: fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/),
  version: fc
    .tuple(fc.nat(30), fc.nat(30), fc.nat(30), fc.option(fc.stringMatching(/^[a-z]{1,5}(\.[0-9]{1,2})?$/), { nil: undefined }))
    .map(([major, minor, patch, pre]) => `${major}.${minor}.${patch}${pre === undefined ? '' : `-${pre}`}`),
  description: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 160 }).filter((text) => text.trim().length > 0),
  requiredTools: fc.array(toolName, { maxLength: 10 }),
  license: fc.constantFrom('Apache-2.0', 'MIT', 'LICENSE.txt', 'BSD-3-Clause', '0', 'true', 'null'),
});
const bodyArbitrary = fc
  .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 300 })
  .map((text) => text.trim())
  .filter((text) => text.length > 0);

describe('serializeSkillDocument', () => {
  it('round-trips: parse(serialise(m)) deep-equals m, and the output passes the agentskills.io rules', () => {
    fc.assert(
      fc.property(manifestArbitrary, bodyArbitrary, (manifest, body) => {
        const text = serializeSkillDocument(manifest, body);
        const parsed = parseSkillDocument(text, { defaultLicense: 'unused' });
        expect(parsed.manifest).toEqual(manifest);
        expect(parsed.body).toBe(body);
        expect(checkAgentSkillsDocument(text, manifest.name)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('writes only agentskills.io keys, metadata in block style, in a fixed order', () => {
    const text = serializeSkillDocument(
      { name: 'x', version: '1.0.0', description: 'Does x.', requiredTools: ['a.b', 'c'], license: 'MIT' },
      'Body',
    );
    expect(text).toBe(
      '---\nname: x\ndescription: Does x.\nlicense: MIT\nmetadata:\n  version: 1.0.0\n  required-tools: a.b c\n---\n\nBody\n',
    );
  });
});

describe('checkAgentSkillsDocument', () => {
  it('reports each agentskills.io rule it checks', () => {
    const bad = `---\nname: Bad--Name-\ndescription: ""\ncompatibility: ${'x'.repeat(501)}\nmetadata:\n  n: 1\nversion: 1.0.0\n---\nb`;
    const fields = checkAgentSkillsDocument(bad, 'other').map((violation) => violation.field);
    expect(fields).toEqual(expect.arrayContaining(['version', 'name', 'description', 'compatibility', 'metadata.n']));
  });
});

describe('renderMetadataBlock', () => {
  it('renders the four advertised fields as one catalog entry', () => {
    expect(renderMetadataBlock({ name: 'x', version: '1.0.0', description: 'Does x.', requiredTools: [], license: 'MIT' })).toBe(
      '- name: x\n  version: 1.0.0\n  description: Does x.\n  required_tools: none',
    );
  });
});
