import type { ActivityDependencies } from './dependencies.ts';
import { createStackCheckActivities } from './stack-check.ts';

/** Every activity the worker registers, built over injected dependencies. */
export const createActivities = (dependencies: ActivityDependencies) => ({
  ...createStackCheckActivities(dependencies),
});

export type Activities = ReturnType<typeof createActivities>;
