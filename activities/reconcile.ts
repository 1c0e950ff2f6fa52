import type { ActivityDependencies } from './dependencies.ts';
import { failFast } from './failures.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { reconcileCluster, type ReconcileClusterOutcome } from '../src/synthesis/reconcile-cluster.ts';
import { reconcileThresholds } from '../src/synthesis/reconcile.ts';

export interface ReconcileClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
}

/** The reconcile step's dependencies, shared with install (which decides for clusters distilled before it ran first). */
export const reconcileSettings = ({ config }: Pick<ActivityDependencies, 'config'>) => ({
  goalModel: config.embedding.model,
  thresholds: reconcileThresholds(config.synthesis),
  minSteps: config.synthesis.minSteps,
  minOccurrences: config.synthesis.minOccurrences,
});

/** RECONCILE, before distillation: the decision is recorded on the cluster; a NOOP ends the cluster here. */
export const createReconcileActivities = ({ pool, config }: ActivityDependencies) => ({
  async reconcileCluster(input: ReconcileClusterInput): Promise<ReconcileClusterOutcome> {
    return failFast(() => whileHeartbeating(() => reconcileCluster({ db: pool, ...reconcileSettings({ config }) }, input)));
  },
});
