import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { serializeSkillDocument, splitFrontMatter, type SkillManifest } from '../skills/skill-format.ts';
import { SkillValidationError } from '../skills/validation-errors.ts';
import { validateBody, validateManifest } from '../skills/validator.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { fitMetadata, shorterDescriptions } from './skill-naming.ts';

/**
 * `Skill.parse` of the 000 spec: maps the four learned fields a distiller emits onto the canonical
 * SKILL.md document, injecting the fixed fields (license from config, version 1.0.0). Strict:
 * malformed output is refused with the reason, never repaired; the one exception is a one-line
 * description too long for the 75-token metadata block, shortened by whole sentences until it
 * fits (the budget is ours, not a rule the model can be relied on to count).
 */

export const NEW_SKILL_VERSION = '1.0.0';

/** The distiller's output cannot become a skill; the cluster is skipped with this reason. */
export class DistillOutputMalformed extends SkillsmithError {
  static override readonly code = 'DistillOutputMalformed';
}

const learnedFieldsSchema = z.strictObject({
  name: z.string().min(1),
  when_to_use: z.string().min(1),
  tools_required: z.array(z.string()),
});

export type LearnedSkill = { kind: 'skip' } | { kind: 'skill'; manifest: SkillManifest; body: string; document: string };

export function parseLearnedSkill(output: string, options: { license: string }): LearnedSkill {
  const text = output.trim();
  if (text === 'SKIP') return { kind: 'skip' };
  if (!text.startsWith('---')) {
    throw new DistillOutputMalformed(`output is neither SKIP nor a document with front matter: ${JSON.stringify(text.slice(0, 80))}`);
  }
  let split: { yamlText: string; rest: string };
  let raw: unknown;
  try {
    split = splitFrontMatter(text);
    raw = parseYaml(split.yamlText, { schema: 'failsafe', uniqueKeys: true });
  } catch (error) {
    throw new DistillOutputMalformed(`front matter does not parse: ${(error as Error).message.split('\n')[0]}`);
  }
  const fields = learnedFieldsSchema.safeParse(raw ?? {});
  if (!fields.success) {
    const issue = fields.error.issues[0];
    throw new DistillOutputMalformed(`front matter ${issue?.path.join('.') || 'object'}: ${issue?.message}`);
  }
  const body = split.rest.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
  if (!/^\s*1\.\s+\S/m.test(body)) throw new DistillOutputMalformed('body has no numbered steps');
  if (!/^## Edge cases\s*$/m.test(body)) throw new DistillOutputMalformed('body has no "## Edge cases" section');

  const emitted: SkillManifest = {
    name: fields.data.name,
    version: NEW_SKILL_VERSION,
    description: fields.data.when_to_use.trim(),
    requiredTools: fields.data.tools_required,
    license: options.license,
  };
  const oneLine = !/[\r\n\u2028\u2029\u0085]/.test(emitted.description);
  const manifest = (oneLine && fitMetadata(emitted, shorterDescriptions(emitted.description))) || emitted;
  try {
    validateManifest(manifest, manifest.name);
    validateBody(body);
  } catch (error) {
    if (error instanceof SkillValidationError) throw new DistillOutputMalformed(`${error.name}: ${error.message}`);
    throw error;
  }
  return { kind: 'skill', manifest, body, document: serializeSkillDocument(manifest, body) };
}
