export { runIntake } from './review-intake.ts';
export { runReview } from './run-review.ts';
export { runReviews } from './run-reviews.ts';
export { stackCheck } from './stack-check.ts';
export { synthesisPass } from './synthesis-pass.ts';
export { synthesizeCluster } from './synthesize-cluster.ts';
