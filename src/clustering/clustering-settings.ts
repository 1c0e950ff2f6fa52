import type { ClusterSimilarity } from '../embedding/model-profiles.ts';

/**
 * The clustering's slice of the configuration: the run similarity and its cut (the embedding
 * model's measured defaults under whatever was set, src/app/config.ts) and the thresholds a
 * cluster must meet to qualify.
 */
export interface ClusteringSettings {
  /** Goal-cosine τ: the `goal` design's cut, the `gate` design's goal threshold, recall and reconcile. */
  similarityTau: number;
  linkage: 'average' | 'complete' | 'single';
  clusterSimilarity: ClusterSimilarity;
  clusterTau: number;
  clusterGoalWeight: number;
  clusterToolTau: number;
  /** Largest threshold-graph component clustered with a dense distance matrix; larger ones take the sparse chain. */
  clusterDenseComponentLimit: number;
  minOccurrences: number;
  minSuccessRate: number;
  minSteps: number;
}
