import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { distillCluster, type DistillOutcome } from '../src/synthesis/distill-cluster.ts';

export interface DistillClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
}

/**
 * DISTILL: one low-temperature LLM call (or the extractive distiller) per cluster. Malformed
 * output skips the cluster inside the activity; an unreachable LLM is retried briefly and then
 * surfaces as `LlmUnavailable`, which stops the pass; a misconfigured one fails fast.
 */
export const createDistillActivities = ({ pool, config, distiller }: ActivityDependencies) => ({
  async distillCluster(input: DistillClusterInput): Promise<DistillOutcome> {
    return whileHeartbeating((signal) => distillCluster(pool, distiller(), { ...input, minSteps: config.synthesis.minSteps }, signal));
  },
});
