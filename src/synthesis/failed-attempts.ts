import type { Queryable } from '../store/database.ts';
import { sharedGoalWords, slotVocabulary, stem, wordsOf } from './goal-words.ts';
import type { EvidenceRun } from './cluster-evidence.ts';
import { loadEvidenceRuns } from './evidence-runs.ts';
import type { PassCluster } from './pass-cluster.ts';
import { findUnsuccessfulRunsApart, type UnsuccessfulRunApart } from './pass-repository.ts';

/**
 * Failed runs that attempted a cluster's procedure though clustering put them apart. A run that
 * failed at its second step has one successful call where the procedure has four, so its
 * sequence, and often its cluster, differs; yet it is an attempt of the procedure, and a track
 * record without it overstates the procedure ("100 % of 9 attempts", "no failures observed").
 *
 * A failed run of the pass's non-qualifying clusters attempted the procedure when the calls it
 * made (the failing one included, a retry counted once) are how at least half of the cluster's
 * successful runs began, at least two calls of them (one common first call says little), and its
 * goal has most of the words the cluster's goals commonly share. Derived from the pass's rows
 * alone, so reconcile, distillation and install count the same runs.
 */

/** Calls a failed run must share with the procedure's start before its tools say it attempted it. */
const MIN_SHARED_CALLS = 2;
/** Share of the cluster's goals a word must be in to be one of the words an attempt's goal must have. */
const COMMON_GOAL_SHARE = 0.5;
/** Share of those words an attempt's goal must have. */
const GOAL_WORDS_REQUIRED = 0.5;

/** Tool names in order, a tool called again straight away (a retry) counted once. */
const collapsed = (tools: string[]) => tools.filter((tool, index) => index === 0 || tools[index - 1] !== tool);

const startsWith = (sequence: string[], prefix: string[]) => prefix.every((tool, index) => sequence[index] === tool);

/** Whether `run` attempted the procedure the successful runs share (see the module comment). */
export function attemptedProcedure(run: Pick<UnsuccessfulRunApart, 'goal' | 'tools'>, successful: EvidenceRun[]): boolean {
  const attempted = collapsed(run.tools);
  if (attempted.length < MIN_SHARED_CALLS || successful.length === 0) return false;
  const sequences = successful.map((evidence) => collapsed(evidence.toolCalls.filter((call) => call.success).map((call) => call.tool)));
  const began = sequences.filter((sequence) => startsWith(sequence, attempted)).length;
  if (began * 2 < sequences.length) return false;
  const common = sharedGoalWords(
    successful.map((evidence) => evidence.goal),
    slotVocabulary(successful),
    COMMON_GOAL_SHARE,
  );
  if (common.length === 0) return true;
  const words = new Set(wordsOf(run.goal).map(stem));
  return common.filter((word) => words.has(word)).length >= GOAL_WORDS_REQUIRED * common.length;
}

/** The failed runs of the pass's non-qualifying clusters that attempted `cluster`'s procedure, by run id. */
export async function findFailedAttempts(db: Queryable, tenantId: string, passId: string, cluster: PassCluster): Promise<string[]> {
  if (!cluster.qualifying) return [];
  // A carried cluster's runs were clustered by the pass that left it pending.
  const apart = await findUnsuccessfulRunsApart(db, tenantId, cluster.carriedFrom ?? passId);
  if (apart.length === 0) return [];
  const successful = await loadEvidenceRuns(db, tenantId, cluster.successfulRunIds, cluster.successfulRunIds);
  return apart.filter((run) => attemptedProcedure(run, successful)).map((run) => run.runId);
}
