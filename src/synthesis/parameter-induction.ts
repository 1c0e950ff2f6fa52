import type { ConsensusProcedure } from '../clustering/consensus-procedure.ts';
import { isStopWord, toolWords } from './goal-words.ts';

/**
 * What a procedure's arguments are, induced from the aligned runs: a value the same in every
 * run stays a literal; a value that varies becomes a named parameter, with its meaning (from
 * the argument's name), example values, and where it comes from — the goal (the value is
 * written in the run's goal), an earlier step's result (the value appears in that call's
 * result: data flow), or a choice made from the goal when neither is seen.
 */

export type ParameterSource =
  { kind: 'goal' } | { kind: 'step-result'; step: number; tool: string; field: string | null } | { kind: 'choice' };

export interface ProcedureParameter {
  name: string;
  meaning: string;
  examples: string[];
  source: ParameterSource;
}

/**
 * How often an argument was passed: `in` of the `of` runs that took its step. Fewer than all is
 * an optional argument, which the body says with how often it appears — a value two of nine runs
 * passed is not a fixed part of the procedure.
 */
export interface ArgumentPresence {
  in: number;
  of: number;
}

export type ArgumentBinding =
  /** `value` is the literal as JSON text. */
  | { argument: string; kind: 'constant'; value: string; presence: ArgumentPresence }
  | { argument: string; kind: 'parameter'; parameter: string; presence: ArgumentPresence };

export interface InducedStep {
  bindings: ArgumentBinding[];
}

export interface InducedParameters {
  parameters: ProcedureParameter[];
  steps: InducedStep[];
}

const MAX_EXAMPLES = 3;
const EXAMPLE_CHARACTERS = 40;

/** The text of an argument value as agents would write it: strings bare, anything else as JSON. */
export function valueText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value as a whole token of a text (not inside a longer word or number), in any case. */
export function wholeTokenPattern(value: string, flags: 'iu' | 'giu'): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, flags);
}

/**
 * A fresh RegExp runs interpreted in V8 (it tiers up only after repeated use), and every value
 * is tested against its run's goal and each earlier result: a cluster of 40 steps of 30
 * arguments took a minute. So a printable ASCII value is first looked for in the caseless text, which
 * holds it exactly when the `iu` pattern could match: the only other characters that case-fold
 * to ASCII are ſ and K (Kelvin), and caseless text writes them s and k.
 */
export function caseless(text: string): string {
  return text.toLowerCase().replace(/\u017f/g, 's');
}

/** False only when the value, in any case, cannot be in the text (given as `caseless(text)`). */
export function mayHold(caselessText: string, value: string): boolean {
  return /[^\x20-\x7e]/.test(value) || caselessText.includes(value.toLowerCase());
}

/** Whether a text mentions a value as a whole token; values too short or too long to tell are never mentioned. */
function mentionTester(): (text: string, value: string) => boolean {
  const patterns = new Map<string, RegExp>();
  const caselessTexts = new Map<string, string>();
  return (text, value) => {
    if (value.trim().length < 2 || value.length > 200) return false;
    let folded = caselessTexts.get(text);
    if (folded === undefined) {
      folded = caseless(text);
      caselessTexts.set(text, folded);
    }
    if (!mayHold(folded, value)) return false;
    let pattern = patterns.get(value);
    if (pattern === undefined) {
      pattern = wholeTokenPattern(value, 'iu');
      patterns.set(value, pattern);
    }
    return pattern.test(text);
  };
}

/** The key under which a result holds the value: from its JSON when it parses, else from `"key": value` text. */
function fieldHolding(resultSummary: string, value: string): string | null {
  const search = (node: unknown, key: string | null): string | null => {
    if (node === null || node === undefined) return null;
    // Parsed JSON holds only strings, numbers, booleans, arrays and objects.
    if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean')
      return key !== null && String(node) === value ? key : null;
    if (typeof node !== 'object') return null;
    for (const [childKey, child] of Object.entries(node)) {
      const found = search(child, Array.isArray(node) ? key : childKey);
      if (found !== null) return found;
    }
    return null;
  };
  try {
    const found = search(JSON.parse(resultSummary), null);
    if (found !== null) return found;
  } catch {
    // Not JSON: fall through to the textual form.
  }
  const match = new RegExp(`"?([A-Za-z_][A-Za-z0-9_]*)"?\\s*[:=]\\s*"?${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, 'u').exec(resultSummary);
  return match?.[1] ?? null;
}

const NAME_CHARACTERS = 40;
const MEANING_CHARACTERS = 60;

function parameterBaseName(argument: string): string {
  const name = toolWords(argument).join('_').slice(0, NAME_CHARACTERS).replace(/_+$/, '');
  return name.length > 0 ? name : 'value';
}

interface Observation {
  runId: string;
  value: string;
  json: string;
  fromGoal: boolean;
  flow: { step: number; tool: string; field: string | null } | null;
}

function modal<T>(items: T[], key: (item: T) => string): { item: T; count: number } | undefined {
  const counts = new Map<string, { item: T; count: number }>();
  for (const item of items) {
    const entry = counts.get(key(item)) ?? { item, count: 0 };
    entry.count += 1;
    counts.set(key(item), entry);
  }
  return [...counts.entries()].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))[0]?.[1];
}

function sourceOf(observations: Observation[]): ParameterSource {
  const flows = observations.flatMap((observation) => (observation.flow ? [observation.flow] : []));
  const goalHits = observations.filter((observation) => observation.fromGoal).length;
  const flow = modal(flows, (item) => `${item.step}\u0000${item.field ?? ''}`);
  const half = observations.length / 2;
  if (flow && flows.length >= half && flows.length >= goalHits) return { kind: 'step-result', ...flow.item };
  if (goalHits >= half && goalHits > 0) return { kind: 'goal' };
  if (flow && flows.length >= half) return { kind: 'step-result', ...flow.item };
  return { kind: 'choice' };
}

export function induceParameters(procedure: ConsensusProcedure): InducedParameters {
  const mentions = mentionTester();
  const parameters: Array<ProcedureParameter & { valuesByRun: Map<string, string> }> = [];
  const steps: InducedStep[] = procedure.steps.map((step, stepIndex) => {
    const takenBy = procedure.runs.filter((run) => run.stepCalls[stepIndex] !== undefined);
    const argumentNames = [...new Set(takenBy.flatMap((run) => Object.keys(run.calls[run.stepCalls[stepIndex]!]!.args ?? {})))].sort();
    const bindings: ArgumentBinding[] = [];
    for (const argument of argumentNames) {
      const observations: Observation[] = [];
      for (const run of takenBy) {
        const callIndex = run.stepCalls[stepIndex]!;
        const args = run.calls[callIndex]!.args ?? {};
        if (!Object.hasOwn(args, argument)) continue;
        const value = valueText(args[argument]);
        let flow: Observation['flow'] = null;
        for (let earlier = callIndex - 1; earlier >= 0 && flow === null; earlier--) {
          const result = run.calls[earlier]!.resultSummary;
          if (!result || !mentions(result, value)) continue;
          const earlierStep = run.stepCalls.indexOf(earlier);
          if (earlierStep < 0) continue;
          flow = { step: earlierStep + 1, tool: procedure.steps[earlierStep]!.tool, field: fieldHolding(result, value) };
        }
        observations.push({
          runId: run.runId,
          value,
          json: JSON.stringify(args[argument]) ?? 'null',
          fromGoal: mentions(run.goal, value),
          flow,
        });
      }
      const distinct = new Set(observations.map((observation) => observation.value));
      const seenElsewhere = observations.some((observation) => observation.fromGoal || observation.flow);
      const presence = { in: observations.length, of: takenBy.length };
      if (distinct.size === 1 && (observations.length >= 2 || !seenElsewhere)) {
        bindings.push({ argument, kind: 'constant', value: observations[0]!.json, presence });
        continue;
      }
      const valuesByRun = new Map(observations.map((observation) => [observation.runId, observation.value]));
      // The same value in every run that has both: the same parameter, passed on to another step.
      const same = parameters.find((parameter) => {
        const shared = [...valuesByRun.keys()].filter((runId) => parameter.valuesByRun.has(runId));
        return (
          shared.length >= Math.min(2, valuesByRun.size) &&
          shared.every((runId) => parameter.valuesByRun.get(runId) === valuesByRun.get(runId))
        );
      });
      if (same) {
        bindings.push({ argument, kind: 'parameter', parameter: same.name, presence });
        continue;
      }
      // A second parameter for the same argument name is told apart by its tool (`flight_location_query`).
      const base = parameterBaseName(argument);
      const taken = (candidate: string) => parameters.some((parameter) => parameter.name === candidate);
      const qualified = parameterBaseName(
        `${toolWords(step.tool)
          .filter((word) => !isStopWord(word) && !/\d/.test(word))
          .slice(-2)
          .join('_')}_${argument}`,
      );
      const name = !taken(base) ? base : !taken(qualified) ? qualified : `${qualified}_${stepIndex + 1}`;
      const examples = [...distinct]
        .slice(0, MAX_EXAMPLES)
        .map((value) => (value.length <= EXAMPLE_CHARACTERS ? value : `${value.slice(0, EXAMPLE_CHARACTERS - 1)}…`));
      parameters.push({
        name,
        meaning: (toolWords(argument).join(' ') || 'value').slice(0, MEANING_CHARACTERS),
        examples,
        source: sourceOf(observations),
        valuesByRun,
      });
      bindings.push({ argument, kind: 'parameter', parameter: name, presence });
    }
    return { bindings };
  });
  return { parameters: parameters.map(({ valuesByRun: _values, ...parameter }) => parameter), steps };
}
