export { stackCheck } from './stack-check.ts';
export { synthesisPass } from './synthesis-pass.ts';
export { synthesizeCluster } from './synthesize-cluster.ts';
