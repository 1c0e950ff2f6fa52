/**
 * A synthesis pass as recorded: what it saw, decided and installed (the workflow's result, the
 * `passes` row). `PassRecord` is part of the public surface (re-exported by src/index.ts).
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
  'pending',
  'carried',
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
