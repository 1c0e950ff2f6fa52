import type { Procedure } from '../procedures/procedure.ts';
import type { ConsensusStep } from '../procedures/procedure.ts';

/**
 * Mem0's decision without DELETE, plus Zep's lineage: a candidate skill against the nearest
 * existing procedure (cosine ≥ τ on when_to_use) becomes ADD, UPDATE (a new revision of that
 * skill), NOOP, or SUPERSEDE (a different procedure for the same goals whose track record is
 * stronger: installed, and the weaker one gets `superseded_by`). Nothing is ever deleted, and a
 * near-duplicate never forks a second live skill.
 */

export interface Candidate {
  name: string;
  toolSequence: ConsensusStep[];
  successCount: number;
  attemptCount: number;
  /** Run ids of the successful runs it was distilled from. */
  fromSessions: string[];
}

export type ReconcileDecision =
  | { action: 'add' }
  | { action: 'update'; target: Procedure; trackRecord: TrackRecord }
  | { action: 'noop'; target: Procedure; reason: string }
  | { action: 'supersede'; weaker: Procedure };

export interface TrackRecord {
  successCount: number;
  attemptCount: number;
  fromSessions: string[];
}

const sequenceKey = (steps: ConsensusStep[]) => steps.map((step) => step.tool).join('\u0000');

const successRate = (record: { successCount: number; attemptCount: number }) =>
  record.attemptCount === 0 ? 0 : record.successCount / record.attemptCount;

/** Higher success rate wins; on a tie, more successes. */
export function dominates(
  candidate: { successCount: number; attemptCount: number },
  existing: { successCount: number; attemptCount: number },
): boolean {
  const difference = successRate(candidate) - successRate(existing);
  if (Math.abs(difference) > 1e-9) return difference > 0;
  return candidate.successCount > existing.successCount;
}

/** The existing record plus the candidate's runs it had not seen (sessions already counted are not counted twice). */
export function mergeTrackRecord(existing: Procedure, candidate: Candidate): TrackRecord {
  const known = new Set(existing.provenance.from_sessions);
  const fresh = candidate.fromSessions.filter((session) => !known.has(session));
  const overlap = candidate.fromSessions.length - fresh.length;
  return {
    successCount: existing.successCount + fresh.length,
    attemptCount: existing.attemptCount + Math.max(fresh.length, candidate.attemptCount - overlap),
    fromSessions: [...existing.provenance.from_sessions, ...fresh],
  };
}

export function reconcile(candidate: Candidate, match: Procedure | undefined): ReconcileDecision {
  if (!match) return { action: 'add' };
  const sameSequence = sequenceKey(candidate.toolSequence) === sequenceKey(match.toolSequence);
  const known = new Set(match.provenance.from_sessions);
  const freshSessions = candidate.fromSessions.filter((session) => !known.has(session));
  if (sameSequence && freshSessions.length === 0) {
    return { action: 'noop', target: match, reason: `same procedure as ${match.name}, no new runs` };
  }
  const sameLineage = sameSequence || candidate.name === match.name || freshSessions.length < candidate.fromSessions.length;
  if (sameLineage) return { action: 'update', target: match, trackRecord: mergeTrackRecord(match, candidate) };
  if (dominates(candidate, match)) return { action: 'supersede', weaker: match };
  return {
    action: 'noop',
    target: match,
    reason: `a different procedure for the same goals as ${match.name}, with a weaker track record ` +
      `(${candidate.successCount}/${candidate.attemptCount} vs ${match.successCount}/${match.attemptCount})`,
  };
}
