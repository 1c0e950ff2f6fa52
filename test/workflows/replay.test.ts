import { Worker } from '@temporalio/worker';
import { describe, it } from 'vitest';
import { workflowsPath } from '../../workers/worker.ts';
import { loadHistory } from '../support/histories.ts';

// Histories recorded from real passes (SKILLSMITH_RECORD_HISTORIES=1 npx vitest run
// test/workflows/synthesis-pass.test.ts -t auto-synthesis). A workflow edit that changes the
// commands a recorded history expects fails here: version it with patched() instead.
describe('recorded histories replay against the current workflow code', () => {
  it.each(['synthesis-pass', 'synthesize-cluster'])('replays %s without nondeterminism', async (fixture) => {
    const { workflowId, history } = await loadHistory(fixture);
    await Worker.runReplayHistory({ workflowsPath }, history, workflowId);
  });
});
