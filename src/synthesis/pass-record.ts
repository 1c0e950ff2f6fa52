import type { ConsensusStep } from '../procedures/procedure.ts';

/**
 * A synthesis pass as recorded: what it saw, decided and installed, and per cluster the
 * decision taken. `PassRecord` is part of the public surface (re-exported by src/index.ts).
 */
export const passCountKeys = [
  'runsSeen',
  'sequences',
  'clusters',
  'qualifying',
  'added',
  'updated',
  'noop',
  'superseded',
  'skipped',
] as const;
export type PassCounts = Record<(typeof passCountKeys)[number], number>;

export const emptyPassCounts = (): PassCounts => Object.fromEntries(passCountKeys.map((key) => [key, 0])) as PassCounts;

export type PassStatus = 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

export interface PassRecord {
  id: string;
  tenantId: string;
  workflowRunId: string | null;
  status: PassStatus;
  outcome: string | null;
  full: boolean;
  since: string | null;
  distiller: string;
  counts: PassCounts;
  startedAt: string;
  finishedAt: string | null;
}

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
  status: 'pending' | 'distilled' | 'installed' | 'skipped';
  candidate: string | null;
  toolSequence: ConsensusStep[] | null;
  decision: 'add' | 'update' | 'noop' | 'supersede' | null;
  skillName: string | null;
  revision: number | null;
  skipReason: string | null;
}

export type NewPassCluster = Pick<
  PassCluster,
  'clusterKey' | 'rank' | 'runIds' | 'successfulRunIds' | 'size' | 'successful' | 'successRate' | 'qualifying' | 'reason'
>;
