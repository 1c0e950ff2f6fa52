import { Worker } from '@temporalio/worker';
import { describe, inject, it } from 'vitest';
import { loadHistory } from '../support/histories.ts';

// Histories recorded from real passes (SKILLSMITH_RECORD_HISTORIES=1 npx vitest run
// test/workflows/synthesis-pass.test.ts -t auto-synthesis records `synthesis-pass-recall-space`, a
// pass that ends by building the tenant's recall space, RECALL_SPACE_PATCH). A
// workflow edit that changes the commands a recorded history expects fails here: version it with
// patched() instead. The older pairs are kept, since workflows started then must still replay: the
// unsuffixed pair was recorded before reconcile ran ahead of distillation (RECONCILE_FIRST_PATCH),
// the *-reconcile-first pair before the cluster step left settling to the reconcile step
// (SETTLE_IN_RECONCILE_PATCH) and the install step was named installCluster (INSTALL_STEP_NAMED_PATCH),
// the *-steps-named pair (recorded the same way) before the recall space.
// `synthesis-pass-continued` (a pass past its LLM budget that starts its continuation,
// PASS_CONTINUATION_PATCH) and `synthesis-pass-continuation` (the continuation: it waits, then
// takes the pending cluster over) come from the same file (-t "continuation").
// The intake's: `run-intake` from test/workflows/intake-review.test.ts (-t "records a signalled run
// once"), `run-intake-stored` and `run-intake-bounded` from test/workflows/intake-lossless.test.ts;
// `run-intake-count-batches` was recorded the same way before LOSSLESS_INTAKE_PATCH (count-only
// batches) and is kept; `run-intake` and `run-intake-count-batches` also start a runReview child per
// run, as before BATCHED_REVIEWS_PATCH. `run-intake-batched-reviews` (one runReviews per intake
// batch) and `run-reviews` come from test/workflows/intake-batched-reviews.test.ts (-t "exactly once").
describe('recorded histories replay against the current workflow code', () => {
  it.each([
    'synthesis-pass',
    'synthesize-cluster',
    'synthesis-pass-reconcile-first',
    'synthesize-cluster-reconcile-first',
    'synthesis-pass-steps-named',
    'synthesize-cluster-steps-named',
    'synthesis-pass-recall-space',
    'synthesis-pass-continued',
    'synthesis-pass-continuation',
    'run-intake-count-batches',
    'run-intake',
    'run-intake-stored',
    'run-intake-bounded',
    'run-intake-batched-reviews',
    'run-reviews',
  ])('replays %s without nondeterminism', async (fixture) => {
    const { workflowId, history } = await loadHistory(fixture);
    // The run's bundle of the current workflow code (test/support/global-setup.ts), not one bundle per history.
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, workflowId);
  });
});
