/**
 * What a distiller sees of one cluster: representative goals, the consensus tool sequence with
 * argument shapes, the steps only some runs took, and the failures observed. Derived from the
 * cluster's runs, deterministically (the same runs always give the same evidence).
 */
import type { ConsensusStep } from '../procedures/procedure.ts';

export interface EvidenceToolCall {
  tool: string;
  args?: Record<string, unknown> | null;
  success: boolean;
  error?: string | null;
}

export interface EvidenceRun {
  runId: string;
  goal: string;
  status: 'completed' | 'failed' | 'cancelled';
  toolCalls: EvidenceToolCall[];
}

export interface ClusterEvidence {
  runCount: number;
  successfulRunCount: number;
  representativeGoals: string[];
  consensusSequence: ConsensusStep[];
  /** Tools some successful runs used that are not in the consensus, with how many runs used each. */
  optionalSteps: Array<{ tool: string; runs: number }>;
  /** Distinct error messages from failed tool calls, most frequent first. */
  observedFailures: Array<{ tool: string; error: string; count: number }>;
  /** The track record the skill will have once installed (the procedure's record): the figures a document states. */
  trackRecord?: { successCount: number; attemptCount: number };
}

const MAX_GOALS = 5;
const MAX_FAILURES = 5;

function successfulSequence(run: EvidenceRun): EvidenceToolCall[] {
  return run.toolCalls.filter((call) => call.success);
}

function byCountThenName<T extends { count: number; key: string }>(a: T, b: T): number {
  return b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

export function buildClusterEvidence(runs: EvidenceRun[], minSteps: number): ClusterEvidence {
  const successful = runs
    .filter((run) => run.status === 'completed' && successfulSequence(run).length >= minSteps)
    .sort((a, b) => (a.runId < b.runId ? -1 : 1));

  // The consensus is the most frequent exact sequence of tool names among successful runs.
  const sequences = new Map<string, { count: number; key: string; tools: string[] }>();
  for (const run of successful) {
    const tools = successfulSequence(run).map((call) => call.tool);
    const key = tools.join('\u0000');
    const entry = sequences.get(key) ?? { count: 0, key, tools };
    entry.count += 1;
    sequences.set(key, entry);
  }
  const consensusTools = [...sequences.values()].sort(byCountThenName)[0]?.tools ?? [];

  const consensusSequence = consensusTools.map((tool, position) => {
    const names = new Set<string>();
    for (const run of successful) {
      const call = successfulSequence(run)[position];
      if (call?.tool === tool) for (const name of Object.keys(call.args ?? {})) names.add(name);
    }
    return { tool, argumentNames: [...names].sort() };
  });

  const inConsensus = new Set(consensusTools);
  const optional = new Map<string, number>();
  for (const run of successful) {
    for (const tool of new Set(successfulSequence(run).map((call) => call.tool))) {
      if (!inConsensus.has(tool)) optional.set(tool, (optional.get(tool) ?? 0) + 1);
    }
  }

  const failures = new Map<string, { count: number; key: string; tool: string; error: string }>();
  for (const run of runs) {
    for (const call of run.toolCalls) {
      if (call.success) continue;
      const error = (call.error ?? 'failed without an error message').replace(/\s+/g, ' ').trim().slice(0, 200);
      const key = `${call.tool}\u0000${error}`;
      const entry = failures.get(key) ?? { count: 0, key, tool: call.tool, error };
      entry.count += 1;
      failures.set(key, entry);
    }
  }

  // Representative goals: distinct goals of successful runs, the most typical first — by the
  // share of the cluster's goals that use each of its words — so slot values (a service name,
  // a customer) weigh less than the words every paraphrase shares.
  const distinctGoals = [...new Set(successful.map((run) => run.goal.replace(/\s+/g, ' ').trim()))];
  const wordsOf = (goal: string) => new Set(goal.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const documentFrequency = new Map<string, number>();
  for (const goal of distinctGoals) for (const word of wordsOf(goal)) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
  const typicality = (goal: string) => {
    const words = [...wordsOf(goal)];
    return words.length === 0 ? 0 : words.reduce((sum, word) => sum + (documentFrequency.get(word) ?? 0), 0) / words.length;
  };
  const goals = distinctGoals.map((goal) => ({ key: goal, count: typicality(goal) }));

  return {
    runCount: runs.length,
    successfulRunCount: successful.length,
    representativeGoals: goals
      .sort(byCountThenName)
      .slice(0, MAX_GOALS)
      .map((goal) => goal.key),
    consensusSequence,
    optionalSteps: [...optional.entries()]
      .map(([tool, count]) => ({ tool, runs: count, count, key: tool }))
      .sort(byCountThenName)
      .map(({ tool, runs: count }) => ({ tool, runs: count })),
    observedFailures: [...failures.values()]
      .sort(byCountThenName)
      .slice(0, MAX_FAILURES)
      .map(({ tool, error, count }) => ({ tool, error, count })),
  };
}
