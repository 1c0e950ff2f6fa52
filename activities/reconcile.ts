import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { heartbeat } from '@temporalio/activity';
import {
  reconcileCluster,
  reconcileSettings,
  settleUnchangedClusters,
  type ReconcileClusterOutcome,
} from '../src/synthesis/reconcile-cluster.ts';

export interface ReconcileClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
}

/** RECONCILE, before distillation: the decision is recorded on the cluster; a NOOP ends the cluster here. */
export const createReconcileActivities = ({ pool, tenantConfig }: ActivityDependencies) => ({
  /**
   * Settles, before the pass spends its budget, every qualifying cluster that is an existing
   * procedure with no run it has not counted (a NOOP needs no distillation); the others are
   * reconciled one by one when their turn comes.
   */
  async settleUnchangedClusters(input: { tenantId: string; passId: string }): Promise<{ settled: number }> {
    const config = await tenantConfig(input.tenantId);
    const settings = reconcileSettings(config.embedding.model, config.synthesis);
    return { settled: await settleUnchangedClusters({ db: pool, ...settings }, input, () => heartbeat({ stage: 'settling' })) };
  },

  async reconcileCluster(input: ReconcileClusterInput): Promise<ReconcileClusterOutcome> {
    const config = await tenantConfig(input.tenantId);
    return whileHeartbeating(() => reconcileCluster({ db: pool, ...reconcileSettings(config.embedding.model, config.synthesis) }, input));
  },
});
