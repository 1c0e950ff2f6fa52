import { heartbeat } from '@temporalio/activity';
import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import {
  reconcileCluster,
  reconcileSettings,
  settleUnchangedClusters,
  type ReconcileClusterDependencies,
  type ReconcileClusterOutcome,
} from '../src/synthesis/reconcile-cluster.ts';

export interface ReconcileClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
}

/** RECONCILE, before distillation: the decision is recorded on the cluster; a NOOP ends the cluster here. */
export const createReconcileActivities = ({ pool, tenantConfig }: ActivityDependencies) => {
  /** What reconcile decides with for a tenant: its model and thresholds (src/app/tenant-config.ts). */
  const dependenciesFor = async (tenantId: string): Promise<ReconcileClusterDependencies> => {
    const config = await tenantConfig(tenantId);
    return { db: pool, ...reconcileSettings(config.embedding.model, config.synthesis) };
  };
  return {
    /**
     * Settles, before the pass spends its budget, every qualifying cluster that is an existing
     * procedure with no run it has not counted (a NOOP needs no distillation); the others are
     * reconciled one by one when their turn comes.
     */
    async settleUnchangedClusters(input: { tenantId: string; passId: string }): Promise<{ settled: number }> {
      const dependencies = await dependenciesFor(input.tenantId);
      return { settled: await settleUnchangedClusters(dependencies, input, () => heartbeat({ stage: 'settling' })) };
    },

    async reconcileCluster(input: ReconcileClusterInput): Promise<ReconcileClusterOutcome> {
      const dependencies = await dependenciesFor(input.tenantId);
      return whileHeartbeating(() => reconcileCluster(dependencies, input));
    },
  };
};
