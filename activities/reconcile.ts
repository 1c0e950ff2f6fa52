import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { reconcileCluster, reconcileSettings, type ReconcileClusterOutcome } from '../src/synthesis/reconcile-cluster.ts';

export interface ReconcileClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
}

/** RECONCILE, before distillation: the decision is recorded on the cluster; a NOOP ends the cluster here. */
export const createReconcileActivities = ({ pool, tenantConfig }: ActivityDependencies) => ({
  async reconcileCluster(input: ReconcileClusterInput): Promise<ReconcileClusterOutcome> {
    const config = await tenantConfig(input.tenantId);
    return whileHeartbeating(() => reconcileCluster({ db: pool, ...reconcileSettings(config.embedding.model, config.synthesis) }, input));
  },
});
