import type { ClusteringSettings } from '../clustering/clustering-settings.ts';

/** The synthesis pass's slice of the configuration: the clustering's, plus the pass's budget, heartbeat and distiller. */
export interface SynthesisSettings extends ClusteringSettings {
  maxClustersPerPass: number;
  /**
   * How soon a pass notices a lost worker (SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS): the heartbeat timeout of
   * its embed, reconcile, distil and install activities, carried in the pass's input.
   */
  heartbeatTimeoutSeconds: number;
  enabled: boolean;
  distiller: 'llm' | 'extractive';
}
