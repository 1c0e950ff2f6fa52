import type { PassRecord } from '../contracts/pass-record.ts';
import type { ConsensusStep } from '../procedures/procedure.ts';

/** One cluster of a synthesis pass as recorded (`pass_clusters`): its runs and the decision taken. */
export interface PassCluster {
  clusterKey: string;
  rank: number | null;
  runIds: string[];
  successfulRunIds: string[];
  size: number;
  successful: number;
  successRate: number;
  qualifying: boolean;
  reason: string | null;
  /** pending → reconciled (decided; a NOOP ends here) → distilled → installed | skipped */
  status: 'pending' | 'reconciled' | 'distilled' | 'installed' | 'skipped';
  candidate: string | null;
  toolSequence: ConsensusStep[] | null;
  decision: 'add' | 'update' | 'noop' | 'supersede' | null;
  skillName: string | null;
  revision: number | null;
  /** Why distillation or install skipped the cluster (only then). */
  skipReason: string | null;
  /** The existing procedure reconcile matched (UPDATE/NOOP target, or the superseded one). */
  targetProcedureId: string | null;
  /** Why reconcile decided as it did, or why the cluster waits. */
  decisionReason: string | null;
  /** successful runs × success rate: qualifying clusters are processed highest first. */
  value: number | null;
  /** The pass that left it pending, when this pass took it over. */
  carriedFrom: string | null;
  /** The pass that took it over, when it was left pending here. */
  carriedTo: string | null;
}

export type NewPassCluster = Pick<
  PassCluster,
  'clusterKey' | 'rank' | 'runIds' | 'successfulRunIds' | 'size' | 'successful' | 'successRate' | 'qualifying' | 'reason' | 'value'
>;

export type ClusterOutcome = 'added' | 'updated' | 'noop' | 'superseded' | 'skipped' | 'pending';

const outcomeOfDecision = { add: 'added', update: 'updated', noop: 'noop', supersede: 'superseded' } as const;

/** What became of a cluster, and why, in one pair of fields (`skillsmith passes show`). */
export function clusterOutcome(
  cluster: PassCluster,
  pass: Pick<PassRecord, 'status' | 'outcome'>,
): { outcome: ClusterOutcome; outcomeReason: string | null } {
  if (!cluster.qualifying) return { outcome: 'skipped', outcomeReason: `not qualifying: ${cluster.reason}` };
  if (cluster.status === 'skipped') return { outcome: 'skipped', outcomeReason: cluster.skipReason };
  if (cluster.decision && (cluster.status === 'installed' || cluster.decision === 'noop')) {
    // Before 008 a SUPERSEDE's note was stored as its skip reason.
    return { outcome: outcomeOfDecision[cluster.decision], outcomeReason: cluster.decisionReason ?? cluster.skipReason };
  }
  if (cluster.carriedTo) return { outcome: 'pending', outcomeReason: `carried to ${cluster.carriedTo}` };
  if (pass.status === 'running') return { outcome: 'pending', outcomeReason: cluster.decisionReason ?? 'not processed yet' };
  if (cluster.decisionReason?.startsWith('waiting:')) return { outcome: 'pending', outcomeReason: cluster.decisionReason };
  return {
    outcome: 'pending',
    outcomeReason:
      `not reached: the pass ended ${pass.status}${pass.outcome ? ` (${pass.outcome})` : ''}; ` +
      (cluster.carriedFrom ? 'the next pass takes it over' : 'the next pass sees its runs again'),
  };
}
