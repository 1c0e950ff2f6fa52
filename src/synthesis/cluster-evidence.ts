import type { ConsensusStep } from '../procedures/procedure.ts';
import { buildConsensusProcedure, successfulSteps, type AlignedRun, type ProcedureCall } from '../clustering/consensus-procedure.ts';
import { isStopWord, sharedGoalWords, slotVocabulary, stem, wordsOf, type SlotVocabulary } from './goal-words.ts';
import {
  caseless,
  induceParameters,
  mayHold,
  valueText,
  wholeTokenPattern,
  type ArgumentBinding,
  type ProcedureParameter,
} from './parameter-induction.ts';
import { representativeSample } from './representative-runs.ts';

/**
 * What a distiller sees of one cluster: the procedure its successful runs share — steps (the
 * consensus and the optional ones, each with its argument bindings), the parameters those
 * bindings name, when optional steps are needed, the failures observed — and the goals of a
 * typical, stratified sample of its runs. Derived deterministically: the same runs, in any
 * order, always give the same evidence.
 */

export type EvidenceToolCall = ProcedureCall;

export interface EvidenceRun {
  runId: string;
  goal: string;
  status: 'completed' | 'failed' | 'cancelled';
  toolCalls: EvidenceToolCall[];
}

export interface EvidenceStep extends ConsensusStep {
  optional: boolean;
  /** Successful runs that took the step. */
  runs: number;
  bindings: ArgumentBinding[];
  /** For an optional step: goal words common in the runs that took it and rare in the others. */
  whenNeeded: string[];
}

export interface ObservedFailure {
  tool: string;
  error: string;
  count: number;
  /** The 1-based step that calls the tool, or null when no step does. */
  step: number | null;
}

export interface ClusterEvidence {
  runCount: number;
  successfulRunCount: number;
  /** Goals of a typical, stratified sample of the successful runs, the most typical first. */
  representativeGoals: string[];
  /** The steps most runs took, in order (what reconcile compares and the procedure stores). */
  consensusSequence: ConsensusStep[];
  /** Every step, consensus and optional, in the order the runs took them. */
  steps: EvidenceStep[];
  parameters: ProcedureParameter[];
  /**
   * The most typical goal in general terms: its parameter values replaced by `{name}` and any
   * other slot value by `…` (null when there is no successful run).
   */
  goalTemplate: string | null;
  /** Content words every goal of the cluster shares, with no slot value among them. */
  sharedGoalWords: string[];
  /** Content words common to the goals (at least COMMON_GOAL_SHARE of them), most common first, no slot value. */
  commonGoalWords: string[];
  /** Every tool any run of the cluster called: what a distiller may name. */
  toolsUsed: string[];
  /** Distinct error messages from failed tool calls, most frequent first. */
  observedFailures: ObservedFailure[];
}

const MAX_GOALS = 5;
const MAX_FAILURES = 5;
const SAMPLE_SIZE = 40;
const MAX_WHEN_NEEDED_WORDS = 3;
const COMMON_GOAL_SHARE = 0.3;
const MAX_COMMON_GOAL_WORDS = 4;

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Long enough to say what went wrong, short enough for an edge case: the error's first line, at most 200 characters. */
const ERROR_SUMMARY_CHARACTERS = 200;
function errorSummary(error: string | null | undefined): string {
  const firstLine = (error ?? 'failed without an error message').trim().split(/\r?\n/)[0]!;
  return firstLine.replace(/\s+/g, ' ').trim().slice(0, ERROR_SUMMARY_CHARACTERS) || 'failed without an error message';
}

function successfulCalls(run: EvidenceRun): EvidenceToolCall[] {
  return run.toolCalls.filter((call) => call.success);
}

/** Words at least half the goals that took a step use, and at most a fifth of the others. */
function whenNeeded(takers: string[], others: string[], slots: SlotVocabulary): string[] {
  const share = (goals: string[], word: string) =>
    goals.length === 0 ? 0 : goals.filter((goal) => wordsOf(goal).map(stem).includes(word)).length / goals.length;
  const candidates = [...new Set(takers.flatMap((goal) => wordsOf(goal).map(stem)))].filter(
    (word) => word.length >= 3 && !isStopWord(word) && !slots.isSlotValue(word),
  );
  return candidates
    .map((word) => ({ word, lift: share(takers, word) - share(others, word) }))
    .filter(({ word, lift }) => share(takers, word) >= 0.5 && share(others, word) <= 0.2 && lift > 0)
    .sort((a, b) => b.lift - a.lift || compareText(a.word, b.word))
    .slice(0, MAX_WHEN_NEEDED_WORDS)
    .map(({ word }) => word);
}

/** A run's goal with the values its parameters took written as `{name}`, and every other slot value as `…`. */
function goalTemplate(run: AlignedRun, bindings: ArgumentBinding[][], slots: SlotVocabulary): string {
  const values = new Map<string, string>();
  run.stepCalls.forEach((callIndex, step) => {
    if (callIndex === undefined) return;
    const args = run.calls[callIndex]!.args ?? {};
    for (const binding of bindings[step] ?? []) {
      if (binding.kind !== 'parameter' || !Object.hasOwn(args, binding.argument)) continue;
      const value = valueText(args[binding.argument]).trim();
      if (value.length >= 2 && !values.has(value)) values.set(value, binding.parameter);
    }
  });
  let template = run.goal.replace(/\s+/g, ' ').trim();
  let folded = caseless(template);
  for (const [value, parameter] of [...values.entries()].sort((a, b) => b[0].length - a[0].length)) {
    if (!mayHold(folded, value)) continue;
    template = template.replace(wholeTokenPattern(value, 'giu'), `{${parameter}}`);
    folded = caseless(template);
  }
  // The goal's first word before an article is its verb ("Ship the latest build"), however the
  // other goals open: it is kept, where a capitalised opener before anything else may be a name.
  const opener = /^([\p{L}]+)\s+(?:a|an|the|my|our|your|their|this|that|these|those|all|every|each|some)\b/iu.exec(template)?.[1];
  return template
    .split(/(\{[A-Za-z0-9_]+\})/)
    .map((part, index) =>
      part.startsWith('{')
        ? part
        : part.replace(/[\p{L}\p{N}_]+/gu, (word, offset: number) =>
            (index === 0 && offset === 0 && word === opener) || isStopWord(word.toLowerCase()) || !slots.isSlotValue(word.toLowerCase())
              ? word
              : '…',
          ),
    )
    .join('')
    .replace(/…(?:[\s'’.,:;()-]*…)+/gu, '…');
}

export function buildClusterEvidence(runs: EvidenceRun[], minSteps: number): ClusterEvidence {
  const sorted = [...runs].sort((a, b) => compareText(a.runId, b.runId));
  const successful = sorted.filter((run) => run.status === 'completed' && successfulCalls(run).length >= minSteps);
  const slots = slotVocabulary(sorted);
  const procedure = buildConsensusProcedure(successful);
  const induced = induceParameters(procedure);

  const steps: EvidenceStep[] = procedure.steps.map((step, index) => {
    const bindings = induced.steps[index]!.bindings;
    const takers = procedure.runs.filter((run) => run.stepCalls[index] !== undefined).map((run) => run.goal);
    const others = procedure.runs.filter((run) => run.stepCalls[index] === undefined).map((run) => run.goal);
    return {
      tool: step.tool,
      argumentNames: bindings.map((binding) => binding.argument),
      optional: step.optional,
      runs: step.runs,
      bindings,
      whenNeeded: step.optional ? whenNeeded(takers, others, slots) : [],
    };
  });

  const failures = new Map<string, ObservedFailure>();
  const observe = (tool: string, error: string) => {
    const key = `${tool}\u0000${error}`;
    const stepIndex = steps.findIndex((step) => step.tool === tool);
    const entry = failures.get(key) ?? { tool, error, count: 0, step: stepIndex < 0 ? null : stepIndex + 1 };
    entry.count += 1;
    failures.set(key, entry);
  };
  for (const run of sorted) {
    for (const call of run.toolCalls) if (!call.success) observe(call.tool, errorSummary(call.error));
    // A run that failed with every call succeeding still failed: where it stopped is what to check.
    const last = run.toolCalls.at(-1);
    if (run.status !== 'completed' && last && run.toolCalls.every((call) => call.success)) {
      observe(last.tool, `the run ended ${run.status} after this call, with no tool error`);
    }
  }

  const sample = representativeSample(
    successful.map((run) => ({
      runId: run.runId,
      goal: run.goal.replace(/\s+/g, ' ').trim(),
      tools: successfulSteps(run.toolCalls).map((call) => call.tool),
    })),
    SAMPLE_SIZE,
  );
  const goals = [...new Set(sample.map((run) => run.goal))];
  const typical = procedure.runs.find((run) => run.runId === sample[0]?.runId);
  const bindings = induced.steps.map((step) => step.bindings);

  return {
    runCount: runs.length,
    successfulRunCount: successful.length,
    representativeGoals: goals.slice(0, MAX_GOALS),
    consensusSequence: steps.filter((step) => !step.optional).map(({ tool, argumentNames }) => ({ tool, argumentNames })),
    steps,
    parameters: induced.parameters,
    goalTemplate: typical ? goalTemplate(typical, bindings, slots) : null,
    sharedGoalWords: sharedGoalWords(
      successful.map((run) => run.goal),
      slots,
    ),
    commonGoalWords: sharedGoalWords(
      successful.map((run) => run.goal),
      slots,
      COMMON_GOAL_SHARE,
    ).slice(0, MAX_COMMON_GOAL_WORDS),
    toolsUsed: [...new Set(sorted.flatMap((run) => run.toolCalls.map((call) => call.tool)))].sort(),
    observedFailures: [...failures.values()]
      .sort((a, b) => b.count - a.count || compareText(`${a.tool}\u0000${a.error}`, `${b.tool}\u0000${b.error}`))
      .slice(0, MAX_FAILURES),
  };
}
