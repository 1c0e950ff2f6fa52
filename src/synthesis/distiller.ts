import type { ChatClient } from '../llm/chat-client.ts';
import { renderMetadataBlock, serializeSkillDocument, type SkillManifest } from '../skills/skill-format.ts';
import { countTokens } from '../skills/token-count.ts';
import { DESCRIPTION_CHARACTER_LIMIT, METADATA_TOKEN_LIMIT, REQUIRED_TOOLS_LIMIT } from '../skills/validator.ts';
import type { ClusterEvidence } from './cluster-evidence.ts';
import { buildDistillUserPrompt, DISTILL_SYSTEM_PROMPT } from './distill-prompt.ts';
import { NEW_SKILL_VERSION, parseLearnedSkill, type LearnedSkill } from './learned-skill.ts';

/**
 * Turns one cluster's evidence into a skill document (or SKIP). Two kinds, chosen explicitly in
 * configuration; the extractive one is never a fallback for a failing LLM.
 */
export interface Distiller {
  readonly kind: 'llm' | 'extractive';
  distill(evidence: ClusterEvidence, options?: { signal?: AbortSignal }): Promise<LearnedSkill>;
}

/** Low temperature: the same cluster should give the same procedure. */
export const DISTILL_TEMPERATURE = 0.1;

export function createLlmDistiller(client: ChatClient, options: { license: string }): Distiller {
  return {
    kind: 'llm',
    async distill(evidence, { signal } = {}) {
      const output = await client.complete({
        system: DISTILL_SYSTEM_PROMPT,
        user: buildDistillUserPrompt(evidence),
        temperature: DISTILL_TEMPERATURE,
        ...(signal ? { signal } : {}),
      });
      return parseLearnedSkill(output, options);
    },
  };
}

const STOP_WORDS = new Set(
  'a an and are as at be by for from in into is it its my of on or our please the this to up with me we you your i can could would should new'.split(
    ' ',
  ),
);

/**
 * A kebab-case name from the words most representative goals share (at most four, in the order
 * they first appear); words only some goals use — slot values like a customer — are left out
 * while enough shared words remain.
 */
function nameFromGoals(goals: string[]): string {
  const counts = new Map<string, { count: number; first: number }>();
  let position = 0;
  for (const goal of goals) {
    for (const word of new Set(goal.toLowerCase().match(/[a-z][a-z0-9]*/g) ?? [])) {
      if (STOP_WORDS.has(word) || word.length < 3) continue;
      const entry = counts.get(word) ?? { count: 0, first: position++ };
      entry.count += 1;
      counts.set(word, entry);
    }
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first);
  const shared = ranked.filter(([, entry]) => entry.count * 2 >= goals.length);
  const words = (shared.length >= 2 ? shared : ranked)
    .slice(0, shared.length >= 2 ? 4 : 3)
    .sort((a, b) => a[1].first - b[1].first)
    .map(([word]) => word);
  const name = words.join('-').slice(0, 64).replace(/-+$/, '');
  return name.length > 0 ? name : 'learned-procedure';
}

function oneLine(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1).trimEnd()}…`;
}

/** Builds the document from the consensus sequence, representative goals and observed failures, with no model. */
export function createExtractiveDistiller(options: { license: string }): Distiller {
  return {
    kind: 'extractive',
    async distill(evidence) {
      if (evidence.consensusSequence.length === 0) return { kind: 'skip' };
      const requiredTools = [...new Set(evidence.consensusSequence.map((step) => step.tool))].slice(0, REQUIRED_TOOLS_LIMIT);
      const manifest: SkillManifest = {
        name: nameFromGoals(evidence.representativeGoals),
        version: NEW_SKILL_VERSION,
        description: '',
        requiredTools,
        license: options.license,
      };
      // The advertised block must fit the catalog's 75 tokens: quote as much of the example goal as fits.
      const exampleWords = oneLine(evidence.representativeGoals[0] ?? '', 200).split(' ');
      for (let words = exampleWords.length; words >= 0; words--) {
        const example = exampleWords.slice(0, words).join(' ') + (words < exampleWords.length ? '…' : '');
        manifest.description = oneLine(
          words > 0 ? `Use for goals like "${example}".` : 'Use for the goals listed in the body.',
          DESCRIPTION_CHARACTER_LIMIT,
        );
        if (countTokens(renderMetadataBlock(manifest)) <= METADATA_TOKEN_LIMIT) break;
      }
      const record = evidence.trackRecord ?? { successCount: evidence.successfulRunCount, attemptCount: evidence.runCount };
      const successRate = Math.round((100 * record.successCount) / Math.max(1, record.attemptCount));
      const steps = evidence.consensusSequence.map((step, index) => {
        const args = step.argumentNames.length ? ` with ${step.argumentNames.map((name) => `\`${name}\``).join(', ')}` : '';
        return `${index + 1}. Call \`${step.tool}\`${args}.`;
      });
      const edgeCases = [
        ...evidence.optionalSteps.map(
          (step) => `- Some successful runs (${step.runs}) also called \`${step.tool}\`; add it when the goal needs it.`,
        ),
        ...evidence.observedFailures.map(
          (failure) =>
            `- \`${failure.tool}\` failed ${failure.count}x with: ${oneLine(failure.error, 160)}. Check its inputs before retrying.`,
        ),
      ];
      if (edgeCases.length === 0) edgeCases.push('- No failures were observed; stop and report if a step fails.');
      const body = [
        `# ${manifest.name.replace(/-/g, ' ').replace(/^./, (letter) => letter.toUpperCase())}`,
        '',
        `Learned from ${record.successCount} successful runs (${successRate}% of ${record.attemptCount} attempts). Goals it served:`,
        ...evidence.representativeGoals.map((goal) => `- ${oneLine(goal, 200)}`),
        '',
        ...steps,
        '',
        '## Edge cases',
        ...edgeCases,
      ].join('\n');
      return { kind: 'skill', manifest, body, document: serializeSkillDocument(manifest, body) };
    },
  };
}
