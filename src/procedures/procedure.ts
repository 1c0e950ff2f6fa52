/**
 * A procedure: the track record of one learned skill — the tool sequence it was distilled
 * from, how often it worked, and the embedding of its when_to_use that recall searches.
 */

/** One step of a tool sequence shared by a cluster's successful runs. */
export interface ConsensusStep {
  tool: string;
  /** Argument names seen for this step across the runs that took it, sorted. */
  argumentNames: string[];
}

export interface Procedure {
  id: string;
  tenantId: string;
  skillId: string;
  name: string;
  revision: number;
  whenToUse: string;
  toolSequence: ConsensusStep[];
  toolsRequired: string[];
  successCount: number;
  attemptCount: number;
  provenance: { source: 'synthesized'; from_sessions: string[] };
  enabled: boolean;
  supersededBy: string | null;
  embeddingModel: string;
  embeddingDimension: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Attempts and successes reviews observed after the procedure was learned. */
  observedAttempts: number;
  observedSuccesses: number;
}

/** A run a procedure's track record counts (once, however many passes see it). */
export interface CountedRun {
  runId: string;
  success: boolean;
}

/** What recall and the catalog make of a learned skill: live, superseded by another, or disabled. */
export interface ProcedureState {
  state: 'live' | 'superseded' | 'disabled';
  enabled: boolean;
  /** The name of the procedure that supersedes it. */
  supersededBy: string | null;
  successCount: number;
  attemptCount: number;
}
