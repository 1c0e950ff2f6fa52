import { toolSequenceSimilarity } from './tool-sequence-similarity.ts';

/**
 * The procedure a cluster's successful runs share, robust to optional steps and retries:
 * each run's successful calls (a retried call leaves one successful call behind, the failed
 * attempts are not steps; a call that succeeded and was made again is a step each time, as the
 * clustering and reconcile count it — details of two hotels are two calls, not one); the tools
 * most runs used are the consensus, in the order most runs used them; the tools only some runs
 * used are optional steps, placed where those runs took them. Every run is aligned to the steps, so later stages read one run's call for
 * each step. Deterministic: the same runs in any order give the same procedure.
 */

export interface ProcedureCall {
  tool: string;
  args?: Record<string, unknown> | null;
  resultSummary?: string | null;
  success: boolean;
  error?: string | null;
}

export interface ProcedureRun {
  runId: string;
  goal: string;
  toolCalls: ProcedureCall[];
}

export interface AlignedStep {
  tool: string;
  /** Successful runs that took this step. */
  runs: number;
  optional: boolean;
}

export interface AlignedRun {
  runId: string;
  goal: string;
  /** The run's successful calls, in order (successfulSteps). */
  calls: ProcedureCall[];
  /** For each step, the index in `calls` of this run's call for it (or undefined: not taken). */
  stepCalls: Array<number | undefined>;
}

export interface ConsensusProcedure {
  steps: AlignedStep[];
  runs: AlignedRun[];
}

/** Optional tools used by fewer runs than this (and this share of runs) are noise, not steps. */
const MIN_OPTIONAL_RUNS = 2;
const MIN_OPTIONAL_SHARE = 0.15;
const MAX_OPTIONAL_STEPS = 5;
const MAX_TIED_CANDIDATES = 64;

/**
 * A run's steps: its successful calls, in order. A retry's failed attempts drop out, so the
 * retried call is one step; two successful calls of one tool stay two steps (a repeat count is
 * part of the procedure: 1 and 2 attraction look-ups are different procedures).
 */
export function successfulSteps(calls: ProcedureCall[]): ProcedureCall[] {
  return calls.filter((call) => call.success);
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Greedy in-order alignment of a run's calls to the steps; an untaken step leaves the cursor where it was. */
function align(calls: ProcedureCall[], steps: Array<{ tool: string }>): Array<number | undefined> {
  const stepCalls: Array<number | undefined> = [];
  let cursor = 0;
  for (const step of steps) {
    let found: number | undefined;
    for (let index = cursor; index < calls.length; index++) {
      if (calls[index]!.tool === step.tool) {
        found = index;
        break;
      }
    }
    stepCalls.push(found);
    if (found !== undefined) cursor = found + 1;
  }
  return stepCalls;
}

/** How many items share each key, with the first item of each. */
function tally<T>(items: T[], key: (item: T) => string): Map<string, { count: number; item: T }> {
  const counts = new Map<string, { count: number; item: T }>();
  for (const item of items) {
    const entry = counts.get(key(item)) ?? { count: 0, item };
    entry.count += 1;
    counts.set(key(item), entry);
  }
  return counts;
}

function mostFrequent<T>(items: T[], key: (item: T) => string): T | undefined {
  return [...tally(items, key).entries()].sort((a, b) => b[1].count - a[1].count || compareText(a[0], b[0]))[0]?.[1].item;
}

/**
 * The projection most runs share; among equally shared ones (in a small cluster every run can
 * differ: an off-plan call here, two steps swapped there) the one most like all the others — the
 * medoid by sequence similarity — so the order is the runs', never the tools' alphabetical one.
 */
function centralProjection(projections: string[][]): string[] {
  const counts = tally(projections, (tools) => tools.join('\u0000'));
  const top = Math.max(0, ...[...counts.values()].map((entry) => entry.count));
  const centrality = (tools: string[]) =>
    [...counts.values()].reduce((sum, other) => sum + other.count * toolSequenceSimilarity({ tools }, { tools: other.item }), 0);
  // At most MAX_TIED_CANDIDATES candidates (by key), so a large cluster of all-different runs costs
  // candidates × distinct comparisons, not distinct².
  const tied = [...counts.entries()]
    .filter(([, entry]) => entry.count === top)
    .sort((a, b) => compareText(a[0], b[0]))
    .slice(0, MAX_TIED_CANDIDATES)
    .map(([key, entry]) => ({ key, tools: entry.item, centrality: centrality(entry.item) }));
  return tied.sort((a, b) => b.centrality - a.centrality || compareText(a.key, b.key))[0]?.tools ?? [];
}

export function buildConsensusProcedure(runs: ProcedureRun[]): ConsensusProcedure {
  const normalised = [...runs]
    .sort((a, b) => compareText(a.runId, b.runId))
    .map((run) => ({ runId: run.runId, goal: run.goal, calls: successfulSteps(run.toolCalls) }));
  const runsWithTool = new Map<string, number>();
  for (const run of normalised)
    for (const tool of new Set(run.calls.map((call) => call.tool))) runsWithTool.set(tool, (runsWithTool.get(tool) ?? 0) + 1);

  // Consensus: project every run onto the tools most runs used, and take the most frequent projection.
  const isCore = (tool: string) => (runsWithTool.get(tool) ?? 0) * 2 > normalised.length;
  const projections = normalised.map((run) => run.calls.filter((call) => isCore(call.tool)).map((call) => call.tool));
  const core = centralProjection(projections);

  // Optional steps go after the core step that most of their runs had just completed.
  const coreAlignments = normalised.map((run) =>
    align(
      run.calls,
      core.map((tool) => ({ tool })),
    ),
  );
  const optionalTools = [...runsWithTool.entries()]
    .filter(([tool, count]) => !core.includes(tool) && count >= Math.max(MIN_OPTIONAL_RUNS, MIN_OPTIONAL_SHARE * normalised.length))
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .slice(0, MAX_OPTIONAL_STEPS)
    .map(([tool]) => tool);
  const insertAfter = new Map<string, number>();
  for (const tool of optionalTools) {
    const positions: number[] = [];
    normalised.forEach((run, runIndex) => {
      const at = run.calls.findIndex((call) => call.tool === tool);
      if (at < 0) return;
      positions.push(coreAlignments[runIndex]!.filter((index) => index !== undefined && index < at).length);
    });
    insertAfter.set(tool, mostFrequent(positions, String) ?? core.length);
  }
  const ordered: Array<{ tool: string; optional: boolean }> = [];
  for (let position = 0; position <= core.length; position++) {
    for (const tool of optionalTools) if (insertAfter.get(tool) === position) ordered.push({ tool, optional: true });
    if (position < core.length) ordered.push({ tool: core[position]!, optional: false });
  }
  const aligned = normalised.map((run) => ({ ...run, stepCalls: align(run.calls, ordered) }));
  const steps = ordered.map((step, index) => ({
    ...step,
    runs: aligned.filter((run) => run.stepCalls[index] !== undefined).length,
  }));
  return { steps, runs: aligned };
}
