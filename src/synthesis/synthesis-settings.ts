import type { ClusteringSettings } from '../clustering/clustering-settings.ts';

/** The synthesis pass's slice of the configuration: the clustering's, plus the pass's budget, heartbeat and distiller. */
export interface SynthesisSettings extends ClusteringSettings {
  /** LLM calls per pass (the 000 spec's budget: it bounds cost); see `passClusterBudget`. */
  maxClustersPerPass: number;
  /** With the LLM distiller, how long after a pass that left clusters pending its continuation starts. */
  continuationDelaySeconds: number;
  /**
   * How soon a pass notices a lost worker (SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS): the heartbeat timeout of
   * its embed, reconcile, distil and install activities, carried in the pass's input.
   */
  heartbeatTimeoutSeconds: number;
  enabled: boolean;
  distiller: 'llm' | 'extractive';
}

/**
 * The qualifying clusters one pass distils. The budget caps LLM calls (the 000 spec: it bounds
 * cost); the extractive distiller makes none, so with it one pass processes every cluster.
 */
export function passClusterBudget(settings: Pick<SynthesisSettings, 'distiller' | 'maxClustersPerPass'>): number {
  return settings.distiller === 'llm' ? settings.maxClustersPerPass : Number.POSITIVE_INFINITY;
}
