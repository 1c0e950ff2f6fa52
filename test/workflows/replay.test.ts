import { Worker } from '@temporalio/worker';
import { describe, it } from 'vitest';
import { workflowsPath } from '../../workers/worker.ts';
import { loadHistory } from '../support/histories.ts';

// Histories recorded from real passes (SKILLSMITH_RECORD_HISTORIES=1 npx vitest run
// test/workflows/synthesis-pass.test.ts -t auto-synthesis records the *-reconcile-first pair). A
// workflow edit that changes the commands a recorded history expects fails here: version it with
// patched() instead. The unsuffixed pair was recorded before reconcile ran ahead of distillation
// (RECONCILE_FIRST_PATCH) and is kept: workflows started then must still replay.
describe('recorded histories replay against the current workflow code', () => {
  it.each(['synthesis-pass', 'synthesize-cluster', 'synthesis-pass-reconcile-first', 'synthesize-cluster-reconcile-first'])(
    'replays %s without nondeterminism',
    async (fixture) => {
      const { workflowId, history } = await loadHistory(fixture);
      await Worker.runReplayHistory({ workflowsPath }, history, workflowId);
    },
  );
});
