import type { ChatClient } from '../llm/chat-client.ts';
import { serializeSkillDocument, type SkillManifest } from '../skills/skill-format.ts';
import { validateManifest } from '../skills/validator.ts';
import type { ClusterEvidence } from './cluster-evidence.ts';
import { buildDistillUserPrompt, DISTILL_SYSTEM_PROMPT } from './distill-prompt.ts';
import { checkAgainstEvidence } from './evidence-check.ts';
import { NEW_SKILL_VERSION, parseLearnedSkill, type LearnedSkill } from './learned-skill.ts';
import { renderProcedureBody, type TrackRecordFigures } from './procedure-body.ts';
import { describeProcedure, fitMetadata, nameProcedure, shorterNames } from './skill-naming.ts';

/**
 * Turns one cluster's evidence into a skill document (or SKIP). Two kinds, chosen explicitly in
 * configuration; the extractive one is never a fallback for a failing LLM.
 */
export interface DistillRequest {
  /** The track record the body's figures state: the runs qualification counted for this procedure. */
  trackRecord: TrackRecordFigures;
  signal?: AbortSignal;
}

export interface Distiller {
  readonly kind: 'llm' | 'extractive';
  distill(evidence: ClusterEvidence, request: DistillRequest): Promise<LearnedSkill>;
}

/** Low temperature: the same cluster should give the same procedure. */
export const DISTILL_TEMPERATURE = 0.1;

export function createLlmDistiller(client: ChatClient, options: { license: string }): Distiller {
  return {
    kind: 'llm',
    async distill(evidence, { signal }) {
      const output = await client.complete({
        system: DISTILL_SYSTEM_PROMPT,
        user: buildDistillUserPrompt(evidence),
        temperature: DISTILL_TEMPERATURE,
        ...(signal ? { signal } : {}),
      });
      const learned = parseLearnedSkill(output, options);
      if (learned.kind === 'skill') checkAgainstEvidence(learned, evidence);
      return learned;
    },
  };
}

/** Builds the parameterised procedure document from the evidence alone, with no model. */
export function createExtractiveDistiller(options: { license: string }): Distiller {
  return {
    kind: 'extractive',
    async distill(evidence, { trackRecord }) {
      if (evidence.consensusSequence.length === 0) return { kind: 'skip' };
      const names = shorterNames(nameProcedure(evidence));
      const draft: SkillManifest = {
        name: names[0]!,
        version: NEW_SKILL_VERSION,
        description: '',
        // Every tool of the procedure, never cut: agents check it for missing tools at load. (The
        // run report and the validator share one tool-name rule, so every tool a run called can be listed.)
        requiredTools: [...new Set(evidence.consensusSequence.map((step) => step.tool))],
        license: options.license,
      };
      // The description shortens first; where a long tool list leaves no room, the name too.
      const manifest = names.reduce<SkillManifest | null>(
        (fitted, name) => fitted ?? fitMetadata({ ...draft, name }, describeProcedure(evidence, name)),
        null,
      ) ?? { ...draft, description: describeProcedure(evidence).at(-1) ?? '' };
      const name = manifest.name;
      // Where the four fields cannot fit (or there are more tools than a skill may list), the
      // validator's named error refuses the cluster: never a skill with a shorter tool list.
      validateManifest(manifest, name);
      const title = name.replace(/-/g, ' ').replace(/^./, (letter) => letter.toUpperCase());
      const body = renderProcedureBody(evidence, { title, trackRecord });
      return { kind: 'skill', manifest, body, document: serializeSkillDocument(manifest, body) };
    },
  };
}
