import { describe, expect, it } from 'vitest';
import { assessClusters, type ClusterRun } from '../../src/clustering/qualification.ts';

const thresholds = { minOccurrences: 3, minSuccessRate: 0.7, minSteps: 3 };

let counter = 0;
const ok = (steps = 4): ClusterRun => ({ runId: `r${counter++}`, status: 'completed', successfulToolCalls: steps });
const failed = (): ClusterRun => ({ runId: `r${counter++}`, status: 'failed', successfulToolCalls: 1 });
const cancelled = (): ClusterRun => ({ runId: `r${counter++}`, status: 'cancelled', successfulToolCalls: 0 });

describe('cluster qualification', () => {
  it('qualifies a cluster with ≥ minOccurrences successful runs and success rate ≥ minSuccessRate', () => {
    const [assessment] = assessClusters([[ok(), ok(), ok(), failed()]], thresholds);
    expect(assessment).toMatchObject({ qualifies: true, rank: 1, successfulRuns: 3, attempts: 4, successRate: 0.75 });
    expect(assessment!.reason).toBeUndefined();
  });

  it('refuses too few successful runs and says how many', () => {
    const [assessment] = assessClusters([[ok(), ok(), failed()]], thresholds);
    expect(assessment!.qualifies).toBe(false);
    expect(assessment!.reason).toEqual({
      code: 'too_few_successful_runs',
      message: '2 successful runs < minOccurrences 3',
    });
  });

  it('counts failed and cancelled runs against the success rate and names the measured rate', () => {
    const [assessment] = assessClusters([[ok(), ok(), ok(), failed(), cancelled()]], thresholds);
    expect(assessment!.qualifies).toBe(false);
    expect(assessment!.reason).toEqual({
      code: 'low_success_rate',
      message: 'success rate 60.0% (3/5) < minSuccessRate 70.0%',
    });
  });

  it('says when completed runs are too short to distil rather than blaming occurrences', () => {
    const [assessment] = assessClusters([[ok(2), ok(2), ok(5), ok(1)]], thresholds);
    expect(assessment!.qualifies).toBe(false);
    expect(assessment!.reason?.code).toBe('too_few_steps');
    expect(assessment!.reason?.message).toBe(
      'only 1 of 4 completed runs have ≥ minSteps 3 successful tool calls (longest: 5); minOccurrences is 3',
    );
    // Too-short runs are neither successes nor failures.
    expect(assessment).toMatchObject({ tooShortRuns: 3, attempts: 1, successRate: 1 });
  });

  it('refuses runs that pass the counts but share no procedure, naming what they share', () => {
    const run = (...tools: string[]): ClusterRun => ({
      runId: `r${counter++}`,
      status: 'completed',
      successfulToolCalls: tools.length,
      successfulTools: tools,
    });
    // three one-off questions that read alike, each answered with off-plan calls in its own order
    const [twoShared] = assessClusters(
      [
        [
          run('web.search', 'web.search', 'fs.read'),
          run('web.search', 'web.search', 'shell.exec'),
          run('web.search', 'memory.recall', 'web.search'),
        ],
      ],
      thresholds,
    );
    expect(twoShared).toMatchObject({ qualifies: false, successfulRuns: 3 });
    expect(twoShared!.reason).toEqual({
      code: 'no_shared_procedure',
      message: 'the successful runs share 2 steps (web.search → web.search) < minSteps 3',
    });
    const [noOrder] = assessClusters(
      [
        [
          run('web.search', 'memory.recall', 'shell.exec'),
          run('notes.write', 'web.search', 'memory.recall'),
          run('memory.recall', 'notes.write', 'web.search'),
        ],
      ],
      thresholds,
    );
    expect(noOrder!.reason).toEqual({
      code: 'no_shared_procedure',
      message:
        'only 1 of 3 successful runs take their shared steps in order (notes.write → web.search → memory.recall); minOccurrences is 3',
    });
    // a procedure with an optional step and an off-plan call: shared, so it qualifies
    const [shared] = assessClusters(
      [[run('a', 'b', 'c'), run('a', 'b', 'x', 'c'), run('a', 'web.search', 'b', 'c'), run('a', 'b', 'c', 'd')]],
      thresholds,
    );
    expect(shared).toMatchObject({ qualifies: true, rank: 1 });
    // Three runs, two of which happened to post to chat as well: what is shared is what enough runs took.
    const [optionalTaken] = assessClusters(
      [[run('a', 'b', 'c', 'chat.post'), run('a', 'b', 'c', 'chat.post'), run('a', 'b', 'c')]],
      thresholds,
    );
    expect(optionalTaken).toMatchObject({ qualifies: true });
    // Setting a step aside never leaves fewer than minSteps: two shared steps stay too few.
    const [tooFew] = assessClusters([[run('a', 'b', 'x'), run('a', 'b', 'x'), run('a', 'b', 'y')]], thresholds);
    expect(tooFew!.reason?.code).toBe('no_shared_procedure');
  });

  it('ranks qualifying clusters by value (successful runs × success rate) and drops none of them', () => {
    const clusters = [
      [ok(), ok(), ok()],
      [ok(), ok(), ok(), ok(), ok()],
      [ok(), ok(), ok(), ok(), failed()],
      [ok(), ok(), ok(), ok()],
    ];
    const assessments = assessClusters(clusters, thresholds);
    // values 3, 5, 4 × 0.8 = 3.2, 4
    expect(assessments.map((assessment) => assessment.rank)).toEqual([4, 1, 3, 2]);
    expect(assessments.map((assessment) => assessment.qualifies)).toEqual([true, true, true, true]);
    expect(assessments.every((assessment) => assessment.reason === undefined)).toBe(true);
  });

  it('gives every cluster that does not qualify a reason', () => {
    const assessments = assessClusters([[ok()], [failed(), failed(), failed()], [ok(), ok(), ok()], [ok(1), ok(1), ok(1)]], thresholds);
    for (const assessment of assessments) {
      expect(assessment.qualifies || assessment.reason !== undefined).toBe(true);
    }
  });
});
