import { createHash } from 'node:crypto';
import { renderMetadataBlock, type SkillManifest } from '../skills/skill-format.ts';
import { countTokens } from '../skills/token-count.ts';
import { DESCRIPTION_CHARACTER_LIMIT, METADATA_TOKEN_LIMIT } from '../skills/validator.ts';
import type { ClusterEvidence } from './cluster-evidence.ts';
import { generalGoal, opensWithVerb, requestItself } from './general-goal.ts';
import { isStopWord, stem, toolWords, wordsOf } from './goal-words.ts';

/**
 * A learned skill's name and description, in words an agent chooses a skill by: the cluster's
 * most typical goal in general terms (`generalGoal`) — what the skill does — and the parameters a
 * goal must supply — when to use it. The name is a short verb phrase of that goal ("refund an order
 * and email them the receipt" → `refund-order-email`), or of its first clause that opens with a verb;
 * where the goal has none (a question, a statement), the verb phrase of the procedure's first acting step. Never a
 * slot value, never an ellipsis or a `{placeholder}`, never a list of tool words. The advertised
 * metadata block is then fitted to the 75-token budget by dropping whole sentences.
 */

const MAX_NAME_WORDS = 4;
const NAME_CHARACTER_LIMIT = 64;
/** Verbs of steps that only read: the name of a question-shaped task leads with the first step that acts. */
const READING_VERBS = new Set([
  'get',
  'list',
  'search',
  'fetch',
  'query',
  'read',
  'find',
  'lookup',
  'describe',
  'show',
  'view',
  'load',
  'check',
  'retrieve',
  'browse',
]);
/** Verbs tool names commonly carry (any API's, not one corpus's): where a tool's name has one, its verb phrase leads with it. */
const ACTING_VERBS = new Set(
  (
    'create add insert update patch edit set put post write append attach delete remove drop send notify email reply ' +
    'comment book reserve cancel deploy restart rollback rotate revoke issue grant assign merge close open run start stop ' +
    'publish upload download restore backup translate approve reject refund charge pay schedule invite share tag label ' +
    'move copy archive apply build test install upgrade sync import export submit reset enable disable mark resolve ' +
    'escalate summarize summarise generate convert transfer'
  ).split(' '),
);
const nameWord = (word: string) => /^[a-z]{2,}$/.test(word) && !isStopWord(word);

type NamingEvidence = Pick<ClusterEvidence, 'consensusSequence' | 'parameters' | 'goalTemplate' | 'representativeGoals'>;

/** The typical goal in general terms, or null when the cluster has no successful run. */
const typicalGoal = (evidence: NamingEvidence) => (evidence.goalTemplate ? generalGoal(evidence.goalTemplate, evidence.parameters) : null);

/**
 * The verb phrase of a step: its first word that is a known verb, then the rest in order
 * (`iam.group.add` → add iam group, `directory.get_user` → get directory user); with none, a
 * dotted name's last word leads (the verb's place in `resource.verb` names).
 */
function stepVerbPhrase(tool: string): string[] {
  const words = toolWords(tool).filter((word) => nameWord(word) || READING_VERBS.has(word) || ACTING_VERBS.has(word));
  const verb = words.findIndex((word) => READING_VERBS.has(word) || ACTING_VERBS.has(word));
  if (verb >= 0) return [words[verb]!, ...words.filter((_, index) => index !== verb)];
  return tool.includes('.') && words.length > 1 ? [words.at(-1)!, ...words.slice(0, -1)] : words;
}

/** The goal, or its first clause that opens with a verb ("Maria is going to stay in Aden, find a hotel there" → "find a hotel there"). */
function requestOf(goal: string | null): string | undefined {
  if (goal === null) return undefined;
  return [goal, ...goal.split(/[,;:.!?]\s+/).slice(1)].find((clause) => opensWithVerb(clause) && wordsOf(clause).length >= 2);
}

/**
 * The task in the words its tools and its goals agree on: the verb of a step that the goals say too
 * (`payments.refund` for goals that ask to refund), then the other words of the steps that the goals
 * say, in step order (`orders.get` → order, `email.send` → email): `refund-order-email`. Where the
 * runs' authors wrapped the request in words of their own ("request from Globex — they want us to
 * transfer the invoice", "time to …") the tools' names still say what the job is. Undefined when no
 * step's verb is in any of the goals.
 */
function agreedWords(evidence: NamingEvidence): string[] | undefined {
  const goals = evidence.representativeGoals.map((goal) => new Set(wordsOf(requestItself(goal)).map(stem)));
  const support = (word: string) => goals.filter((words) => words.has(stem(word))).length;
  const phrases = evidence.consensusSequence.map((step) => stepVerbPhrase(step.tool));
  const verbs = phrases
    .map((phrase, index) => ({ verb: phrase[0], index }))
    .filter((entry): entry is { verb: string; index: number } => entry.verb !== undefined && support(entry.verb) > 0)
    // An acting step before a reading one, then the verb more goals say, then the earlier step.
    .sort(
      (a, b) =>
        Number(READING_VERBS.has(a.verb)) - Number(READING_VERBS.has(b.verb)) || support(b.verb) - support(a.verb) || a.index - b.index,
    );
  const chosen = verbs[0];
  if (!chosen) return undefined;
  const objects = new Map<string, string>();
  for (const phrase of phrases)
    for (const word of phrase)
      if (stem(word) !== stem(chosen.verb) && !READING_VERBS.has(word) && !ACTING_VERBS.has(word) && support(word) > 0)
        objects.set(stem(word), stem(word));
  return [chosen.verb, ...[...objects.values()].slice(0, MAX_NAME_WORDS - 1)];
}

/** A goal's opening verb and its objects (stemmed): those the tools or the parameters name first, in the goal's order. */
function goalPhrase(goal: string, evidence: NamingEvidence): [string, ...string[]] {
  // The opening verb may be a common one ("make", "find"): only its objects must be content words.
  const [verb, ...all] = wordsOf(goal).filter((word) => /^[a-z]{2,}$/.test(word));
  const rest = all.filter(nameWord);
  const known = new Set([
    ...evidence.consensusSequence.flatMap((step) => toolWords(step.tool).map(stem)),
    ...evidence.parameters.flatMap((parameter) => wordsOf(parameter.meaning).map(stem)),
  ]);
  const objects = [...new Map(rest.filter((word) => stem(word) !== stem(verb!)).map((word) => [stem(word), word])).values()];
  const chosen = new Set([...objects.filter((word) => known.has(stem(word))), ...objects].slice(0, MAX_NAME_WORDS - 1));
  return [verb!, ...objects.filter((word) => chosen.has(word)).map(stem)];
}

/** The content words after `verb` in the typical goal in general terms (no slot value), stemmed. */
function objectsAfter(verb: string, evidence: NamingEvidence): string[] {
  const words = wordsOf(typicalGoal(evidence) ?? '').filter((word) => /^[a-z]{2,}$/.test(word));
  const at = words.findIndex((word) => stem(word) === stem(verb));
  const objects: string[] = [];
  for (const word of at < 0 ? [] : words.slice(at + 1))
    if (objects.length < MAX_NAME_WORDS - 1 && nameWord(word) && !objects.includes(stem(word))) objects.push(stem(word));
  return objects;
}

function nameWords(evidence: NamingEvidence): string[] {
  const agreed = agreedWords(evidence);
  const goal = requestOf(typicalGoal(evidence));
  // A verb alone ("export") says no task: its object is what follows it in a goal that says it
  // ("export the confidentiality agreement for …" → export-confidentiality-agreement).
  if (agreed && agreed.length === 1) {
    const objects = objectsAfter(agreed[0]!, evidence);
    if (objects.length > 0) return [agreed[0]!, ...objects];
  }
  if (agreed) return agreed;
  if (goal) return goalPhrase(goal, evidence);
  const steps = evidence.consensusSequence.map((step) => stepVerbPhrase(step.tool)).filter((phrase) => phrase.length > 0);
  const acting = steps.find((phrase) => !READING_VERBS.has(phrase[0]!)) ?? steps.at(-1) ?? [];
  return acting.slice(0, MAX_NAME_WORDS);
}

export function nameProcedure(evidence: NamingEvidence): string {
  const words = nameWords(evidence);
  while (words.length > 1 && words.join('-').length > NAME_CHARACTER_LIMIT) words.pop();
  const name = words.join('-');
  if (name.length > 0 && name.length <= NAME_CHARACTER_LIMIT) return name;
  const tools = evidence.consensusSequence.map((step) => step.tool).join('\u0000');
  return `procedure-${createHash('sha256').update(tools).digest('hex').slice(0, 8)}`;
}

const capitalised = (text: string) => text.replace(/^./, (letter) => letter.toUpperCase());
/** One sentence: capitalised, ending in its question mark or a full stop. */
const sentence = (text: string) => `${capitalised(text.replace(/[.!]+$/, ''))}${/\?$/.test(text) ? '' : '.'}`;

/** "a, b and c". */
const listed = (items: string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}`);

/**
 * Descriptions from the most to the least detailed: what the skill does (the typical goal in
 * general terms; for a goal that is a question, the goals it answers), then when to use it (the
 * parameters a goal must supply); then the first sentence alone; then the name in words.
 */
export function describeProcedure(
  evidence: Pick<ClusterEvidence, 'consensusSequence' | 'parameters' | 'steps' | 'goalTemplate' | 'representativeGoals'>,
  name: string = nameProcedure(evidence),
): string[] {
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
        .map((parameter) => wordsOf(parameter.meaning).join(' '))
        .filter((meaning) => meaning.length > 0),
    ),
  ];
  const goal = typicalGoal(evidence);
  const does = goal ? (opensWithVerb(goal) ? sentence(goal) : `For goals like "${sentence(goal)}"`) : null;
  const when = givens.length > 0 ? `Use when the goal gives the ${listed(givens)}.` : null;
  const named = sentence(name.replace(/-/g, ' '));
  const candidates = [
    ...(does ? [when ? `${does} ${when}` : does, does, ...(opensWithVerb(goal!) ? firstClause(does) : [])] : []),
    when ? `${named} ${when}` : named,
    named,
  ];
  return [...new Set(candidates.map((candidate) => clipDescription(candidate)))];
}

/** The sentence up to its first clause break, when there is one: "Refund an order and email them." → "Refund an order." */
function firstClause(text: string): string[] {
  const clause = /^(.+?)(?:,| and | then |;)/.exec(text)?.[1];
  return clause && wordsOf(clause).length >= 2 ? [sentence(clause)] : [];
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

/**
 * A description and its ever shorter forms, each whole sentences or clauses: its leading sentences,
 * down to the first, then the first sentence's first clause. Never a cut word or an ellipsis:
 * where none fits, the skill is refused by the validator's rule.
 */
export function shorterDescriptions(description: string): string[] {
  const sentences = clipDescription(description).split(/(?<=[.!?])\s+/);
  const leading = sentences.map((_, index) => sentences.slice(0, sentences.length - index).join(' '));
  return [...new Set([...leading, ...firstClause(sentences[0]!)])];
}

const fits = (manifest: SkillManifest) => countTokens(renderMetadataBlock(manifest)) <= METADATA_TOKEN_LIMIT;

/**
 * The manifest with the first description (most detailed first) whose metadata block fits the
 * budget. The block fits by its description alone: `required-tools` is the procedure's complete
 * list, which the load-time missing-tools check trusts, so it is never cut. Null when no
 * description fits beside the name, version and every tool — the caller then refuses the skill
 * with the validator's rule.
 */
/** A name and its shorter forms, a word fewer each (`catch-flight-hotel` → `catch-flight` → `catch`): for a metadata block that a long tool list fills. */
export function shorterNames(name: string): string[] {
  const words = name.split('-');
  return words.map((_, index) => words.slice(0, words.length - index).join('-'));
}

export function fitMetadata(manifest: SkillManifest, descriptions: string[]): SkillManifest | null {
  for (const description of descriptions) {
    const candidate = { ...manifest, description };
    if (fits(candidate)) return candidate;
  }
  return null;
}

/**
 * The manifest under the identity it is installed with — a free `<name>-2`, an update's next
 * version — with its description shortened by whole sentences again if the longer name or version
 * pushed the metadata block past its budget (the distiller fitted it under the name it proposed);
 * unchanged when none fits, for install's validator to refuse by the rule.
 */
export function withIdentity(manifest: SkillManifest, identity: Pick<SkillManifest, 'name' | 'version'>): SkillManifest {
  const renamed = { ...manifest, ...identity };
  // Last, the task in the words of the name it was learned under ("Refund order email.").
  const named = sentence(manifest.name.replace(/-/g, ' '));
  return fitMetadata(renamed, [...shorterDescriptions(renamed.description), named]) ?? renamed;
}
