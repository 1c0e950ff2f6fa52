import type { ActivityDependencies } from './dependencies.ts';
import { createClusterActivities } from './cluster.ts';
import { createDistillActivities } from './distill.ts';
import { createEmbedActivities } from './embed.ts';
import { createExtractActivities } from './extract.ts';
import { createInstallActivities } from './install.ts';
import { createIntakeActivities } from './review-intake.ts';
import { createPassActivities } from './passes.ts';
import { createReconcileActivities } from './reconcile.ts';
import { createReviewActivities } from './review.ts';
import { createStackCheckActivities } from './stack-check.ts';

/** Every activity the worker registers, built over injected dependencies. */
export const createActivities = (dependencies: ActivityDependencies) => ({
  ...createStackCheckActivities(dependencies),
  ...createPassActivities(dependencies),
  ...createExtractActivities(dependencies),
  ...createEmbedActivities(dependencies),
  ...createClusterActivities(dependencies),
  ...createReconcileActivities(dependencies),
  ...createDistillActivities(dependencies),
  ...createInstallActivities(dependencies),
  ...createIntakeActivities(dependencies),
  ...createReviewActivities(dependencies),
});

export type Activities = ReturnType<typeof createActivities>;
