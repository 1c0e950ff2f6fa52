import type { ActivityDependencies } from './dependencies.ts';
import { failingFast } from './failures.ts';
import { createClusterActivities, type ClusterPassGoalsInput, type ClusterPassGoalsResult } from './cluster.ts';
import { createDistillActivities } from './distill.ts';
import { createEmbedActivities } from './embed.ts';
import { createExtractActivities } from './extract.ts';
import { createInstallActivities, type InstallClusterInput, type InstallClusterResult } from './install.ts';
import { createIntakeActivities } from './review-intake.ts';
import { createPassActivities } from './passes.ts';
import { createReconcileActivities } from './reconcile.ts';
import { createRecallSpaceActivities } from './recall-space.ts';
import { createReviewActivities } from './review.ts';
import { createStackCheckActivities } from './stack-check.ts';

/**
 * The install step's activity type in histories recorded before it was named for its step alone
 * (INSTALL_STEP_NAMED_PATCH), kept for the executions that still call it: the reconcile step first
 * (it returns the recorded decision, or decides a cluster distilled by a workflow started before
 * reconcile ran ahead of distillation), then the install step.
 */
const legacyInstallActivity = (
  reconcile: ReturnType<typeof createReconcileActivities>,
  install: ReturnType<typeof createInstallActivities>,
) => ({
  async reconcileAndInstall(input: InstallClusterInput): Promise<InstallClusterResult> {
    await reconcile.reconcileCluster(input);
    return install.installCluster(input);
  },
});

/**
 * The cluster step's activity in histories recorded before SETTLE_IN_RECONCILE_PATCH, kept for the
 * executions that still call it: clustering, the reconcile step's settling of unchanged clusters and
 * the budget's selection, in one activity as it was.
 */
const legacyClusterActivity = (
  cluster: ReturnType<typeof createClusterActivities>,
  reconcile: ReturnType<typeof createReconcileActivities>,
  passes: ReturnType<typeof createPassActivities>,
) => ({
  async clusterPassGoals(input: ClusterPassGoalsInput): Promise<ClusterPassGoalsResult> {
    const clustered = await cluster.clusterPassRuns(input);
    await reconcile.settleUnchangedClusters(input);
    return { ...clustered, ...(await passes.selectPassClusters(input)) };
  },
});

/**
 * Every activity the worker registers, built over injected dependencies; an error whose class says it
 * must not be retried fails its activity at once, typed with its code (failFast).
 */
export const createActivities = (dependencies: ActivityDependencies) => {
  const passes = createPassActivities(dependencies);
  const cluster = createClusterActivities(dependencies);
  const reconcile = createReconcileActivities(dependencies);
  const install = createInstallActivities(dependencies);
  return failingFast({
    ...createStackCheckActivities(dependencies),
    ...passes,
    ...createExtractActivities(dependencies),
    ...createEmbedActivities(dependencies),
    ...cluster,
    ...legacyClusterActivity(cluster, reconcile, passes),
    ...reconcile,
    ...createDistillActivities(dependencies),
    ...install,
    ...legacyInstallActivity(reconcile, install),
    ...createRecallSpaceActivities(dependencies),
    ...createIntakeActivities(dependencies),
    ...createReviewActivities(dependencies),
  });
};

export type Activities = ReturnType<typeof createActivities>;
