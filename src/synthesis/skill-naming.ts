import { createHash } from 'node:crypto';
import { renderMetadataBlock, type SkillManifest } from '../skills/skill-format.ts';
import { countTokens } from '../skills/token-count.ts';
import { DESCRIPTION_CHARACTER_LIMIT, METADATA_TOKEN_LIMIT } from '../skills/validator.ts';
import type { ClusterEvidence } from './cluster-evidence.ts';
import { isStopWord, stem, toolWords } from './goal-words.ts';

/**
 * A learned skill's name and description, from what its procedure does: the verbs and objects
 * of its tools' names, and the words every goal of its cluster shares (which exclude slot
 * values by construction: see `sharedGoalWords`). Never an example goal, never a slot value.
 * The advertised metadata block is then fitted to the 75-token budget deterministically.
 */

const MAX_NAME_WORDS = 6;
const MAX_TOOL_NAME_WORDS = 4;
const MAX_GOAL_NAME_WORDS = 2;
const NAME_CHARACTER_LIMIT = 64;

const nameWord = (word: string) => /^[a-z]{2,}$/.test(word) && !isStopWord(word);

export function nameProcedure(evidence: Pick<ClusterEvidence, 'consensusSequence' | 'sharedGoalWords'>): string {
  // Each tool's words, in order, as stems seen for the first time; every tool names at least one.
  const stream: Array<{ word: string; tool: number }> = [];
  evidence.consensusSequence.forEach((step, tool) => {
    for (const word of toolWords(step.tool).map(stem)) {
      if (nameWord(word) && !stream.some((entry) => entry.word === word)) stream.push({ word, tool });
    }
  });
  const goalWords = evidence.sharedGoalWords
    .filter((word) => nameWord(word) && !stream.some((entry) => entry.word === word))
    .slice(0, MAX_GOAL_NAME_WORDS);
  // The steps' verbs and objects first (what the procedure does), then what its goals share.
  const toolBudget = Math.max(MAX_TOOL_NAME_WORDS, MAX_NAME_WORDS - goalWords.length);
  const chosen = new Set<string>();
  for (let tool = 0; tool < evidence.consensusSequence.length && chosen.size < toolBudget; tool++) {
    const first = stream.find((entry) => entry.tool === tool && !chosen.has(entry.word));
    if (first) chosen.add(first.word);
  }
  for (const entry of stream) if (chosen.size < toolBudget) chosen.add(entry.word);
  const words = [...stream.filter((entry) => chosen.has(entry.word)).map((entry) => entry.word), ...goalWords];
  while (words.length > 1 && words.join('-').length > NAME_CHARACTER_LIMIT) words.pop();
  const name = words.join('-');
  if (name.length > 0 && name.length <= NAME_CHARACTER_LIMIT) return name;
  const tools = evidence.consensusSequence.map((step) => step.tool).join('\u0000');
  return `procedure-${createHash('sha256').update(tools).digest('hex').slice(0, 8)}`;
}

/** A tool's name as a phrase: `Get_Popular_Attraction_Near_By` → "get popular attraction near by". */
export function toolPhrase(tool: string): string {
  const words = toolWords(tool).filter((word) => !/\d/.test(word));
  return words.length > 0 ? words.join(' ') : tool;
}

const capitalised = (text: string) => text.replace(/^./, (letter) => letter.toUpperCase());

/**
 * Descriptions from the most to the least detailed: what the steps do, then when to use it —
 * the goals' shared subject and the parameters a goal must supply.
 */
export function describeProcedure(
  evidence: Pick<ClusterEvidence, 'consensusSequence' | 'commonGoalWords' | 'parameters' | 'steps' | 'goalTemplate'>,
): string[] {
  const phrases = evidence.consensusSequence
    .map((step) => toolPhrase(step.tool))
    .filter((phrase, index, all) => index === 0 || all[index - 1] !== phrase);
  // What a goal must supply: the parameters the consensus steps take from the goal, not from a result.
  const bound = new Set(
    evidence.steps
      .filter((step) => !step.optional)
      .flatMap((step) => step.bindings.flatMap((binding) => (binding.kind === 'parameter' ? [binding.parameter] : []))),
  );
  const givens = [
    ...new Set(
      evidence.parameters
        .filter((parameter) => bound.has(parameter.name) && parameter.source.kind !== 'step-result')
        .map((parameter) => parameter.meaning),
    ),
  ];
  const subject = evidence.commonGoalWords.join(', ');
  const when = (withGivens: boolean) => {
    const about = subject ? ` about ${subject}` : '';
    const giving = withGivens && givens.length > 0 ? ` that give the ${givens.join(', ')}` : '';
    return about || giving ? `Use for goals${about}${giving}.` : `Use when a goal needs this.`;
  };
  const does = (parts: string[]) => `${capitalised(parts.join(', then '))}.`;
  const firstAndLast = phrases.length > 2 ? [phrases[0]!, `… ${phrases.at(-1)!}`] : phrases;
  // The typical goal in general terms leads (a planner's goal reads like it, and recall embeds this
  // text), cut to its first sentence or fewer words when the block would not fit.
  const templates: string[] = [];
  if (evidence.goalTemplate) {
    const full = evidence.goalTemplate.replace(/[.!?]+$/, '');
    const words = full.split(' ');
    const firstSentence = full.split(/(?<=[.!?])\s/)[0]!.replace(/[.!?]+$/, '');
    templates.push(
      full,
      firstSentence,
      ...[24, 16, 10, 6].filter((count) => words.length > count).map((count) => `${words.slice(0, count).join(' ')} …`),
    );
  }
  const goalLike = [...new Set(templates)].map((template) => `${capitalised(template)}.`);
  const withTemplate = [
    ...goalLike.flatMap((template) => [
      `${template} ${does(phrases)} ${when(true)}`,
      `${template} ${does(phrases)}`,
      `${template} ${does(firstAndLast)}`,
    ]),
    ...goalLike,
  ];
  const candidates = [
    ...withTemplate,
    `${does(phrases)} ${when(true)}`,
    `${does(phrases)} ${when(false)}`,
    `${does(firstAndLast)} ${when(true)}`,
    `${does(firstAndLast)} ${when(false)}`,
    `${does(phrases.slice(-1))} ${when(false)}`,
    does(phrases.slice(-1)),
    'Learned procedure.',
  ];
  return [...new Set(candidates.map((candidate) => clipDescription(candidate)))];
}

/** One line of at most `limit` characters (code points), cut at a word with an ellipsis. */
export function clipLine(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if ([...flat].length <= limit) return flat;
  return `${[...flat]
    .slice(0, limit - 1)
    .join('')
    .replace(/\s+\S*$/, '')}…`;
}

/** One line within the description's character limit, cut at a word with an ellipsis. */
export function clipDescription(text: string): string {
  return clipLine(text, DESCRIPTION_CHARACTER_LIMIT);
}

/** Ever shorter word prefixes of a description, for fitting one that has no shorter variants. */
export function wordPrefixes(description: string): string[] {
  const words = clipDescription(description).split(' ');
  const prefixes = [words.join(' ')];
  for (let count = words.length - 1; count >= 1; count--)
    prefixes.push(
      `${words
        .slice(0, count)
        .join(' ')
        .replace(/[,;:]$/, '')}…`,
    );
  return prefixes;
}

const fits = (manifest: SkillManifest) => countTokens(renderMetadataBlock(manifest)) <= METADATA_TOKEN_LIMIT;

/**
 * The manifest with the first description (most detailed first) whose metadata block fits the
 * budget. The block fits by its description alone: `required-tools` is the procedure's complete
 * list, which the load-time missing-tools check trusts, so it is never cut. Null when no
 * description fits beside the name, version and every tool — the caller then refuses the skill
 * with the validator's rule.
 */
export function fitMetadata(manifest: SkillManifest, descriptions: string[]): SkillManifest | null {
  for (const description of descriptions) {
    const candidate = { ...manifest, description };
    if (fits(candidate)) return candidate;
  }
  return null;
}

/**
 * The manifest under the identity it is installed with — a free `<name>-2`, an update's next
 * version — with its description cut at a word again if the longer name or version pushed the
 * metadata block past its budget (the distiller fitted it under the name it proposed).
 */
export function withIdentity(manifest: SkillManifest, identity: Pick<SkillManifest, 'name' | 'version'>): SkillManifest {
  const renamed = { ...manifest, ...identity };
  return fitMetadata(renamed, wordPrefixes(renamed.description)) ?? renamed;
}
