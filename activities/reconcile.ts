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

/** The reconcile step's dependencies (`config`: the tenant's), shared with install (which decides for clusters distilled before it ran first). */
export const reconcileSettings = ({ config }: Pick<ActivityDependencies, 'config'>) => ({
  goalModel: config.embedding.model,
  thresholds: reconcileThresholds(config.synthesis),
  minSteps: config.synthesis.minSteps,
  minOccurrences: config.synthesis.minOccurrences,
});

/** RECONCILE, before distillation: the decision is recorded on the cluster; a NOOP ends the cluster here. */
export const createReconcileActivities = ({ pool, tenantConfig }: ActivityDependencies) => ({
  async reconcileCluster(input: ReconcileClusterInput): Promise<ReconcileClusterOutcome> {
    return failFast(async () => {
      const config = await tenantConfig(input.tenantId);
      return whileHeartbeating(() => reconcileCluster({ db: pool, ...reconcileSettings({ config }) }, input));
    });
  },
});
