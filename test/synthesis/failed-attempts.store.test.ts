import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReportSchema, type RunReport } from '../../src/runs/run-report.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { parseSkillDocument } from '../../src/skills/skill-format.ts';
import type { EvidenceRun } from '../../src/synthesis/cluster-evidence.ts';
import { countedRunsOf } from '../../src/synthesis/cluster-track-record.ts';
import { distillCluster } from '../../src/synthesis/distill-cluster.ts';
import { createExtractiveDistiller } from '../../src/synthesis/distiller.ts';
import { attemptedProcedure } from '../../src/synthesis/failed-attempts.ts';
import { beginPassRecord, getPassCluster, recordPassClusters } from '../../src/synthesis/pass-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * The README walkthrough's refund runs: nine completed refunds and one that failed at its second
 * step (the refund window had closed), which clustering put apart — it has one successful call
 * where the procedure has four. It attempted the procedure all the same, and the skill says so.
 */
const tenantId = 'acme';
const passId = 'synthesis/acme/2026-12-04T00:00:00.000Z';

async function walkthroughRuns(): Promise<RunReport[]> {
  const lines = (await readFile('docs/examples/acme-runs.jsonl', 'utf8')).split('\n').filter((line) => line.trim().length > 0);
  const posted = await readFile('docs/examples/acme-run.json', 'utf8');
  return [...lines, posted].map((text) => runReportSchema.parse({ ...(JSON.parse(text) as object), tenantId }));
}

/** A failed run of another task that begins with the same lookup. */
const tracking = runReportSchema.parse({
  tenantId,
  agentId: 'support-bot',
  runId: 'acme-track-01',
  goal: 'Where is the parcel of order A-1200 for Olu Adeyemi?',
  status: 'failed',
  startedAt: '2026-11-13T10:00:00Z',
  completedAt: '2026-11-13T10:00:20Z',
  toolCalls: [
    { tool: 'orders.get', args: { orderId: 'A-1200' }, success: true },
    { tool: 'shipping.track', args: { orderId: 'A-1200' }, success: false, error: 'carrier API timeout' },
  ],
});

describe('an honest track record', () => {
  let database: TestDatabase;
  let successfulRunIds: string[];

  beforeAll(async () => {
    database = await openTestDatabase();
    const reports = [...(await walkthroughRuns()), tracking];
    await upsertRuns(database.pool, tenantId, reports);
    successfulRunIds = reports.filter((report) => report.status === 'completed').map((report) => report.runId);
    await beginPassRecord(database.pool, { tenantId, id: passId, workflowRunId: 'run', full: false, since: null, distiller: 'extractive' });
    const apart = (clusterKey: string, runId: string) => ({
      clusterKey,
      rank: null,
      runIds: [runId],
      successfulRunIds: [],
      size: 1,
      successful: 0,
      successRate: 0,
      qualifying: false,
      reason: '0 successful runs < minOccurrences 3',
      value: null,
    });
    await recordPassClusters(database.pool, tenantId, passId, [
      {
        clusterKey: 'refunds',
        rank: 1,
        runIds: successfulRunIds,
        successfulRunIds,
        size: successfulRunIds.length,
        successful: successfulRunIds.length,
        successRate: 1,
        qualifying: true,
        reason: null,
        value: successfulRunIds.length,
      },
      apart('failed-refund', 'acme-refund-06'),
      apart('failed-tracking', 'acme-track-01'),
    ]);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('counts a failed run that attempted the procedure, though clustered apart, and no failed run of another task', async () => {
    const cluster = await getPassCluster(database.pool, tenantId, passId, 'refunds');
    const counted = await countedRunsOf(database.pool, tenantId, passId, cluster);
    expect(counted.filter((run) => run.success)).toHaveLength(9);
    expect(counted.filter((run) => !run.success)).toEqual([{ runId: 'acme-refund-06', success: false }]);
  });

  it('writes the attempt into the skill: its rate, and the failure as an edge case with its step, error and count', async () => {
    const outcome = await distillCluster(database.pool, createExtractiveDistiller({ license: 'Apache-2.0' }), {
      tenantId,
      passId,
      clusterKey: 'refunds',
      minSteps: 3,
    });
    expect(outcome.status).toBe('distilled');
    const { candidate } = await getPassCluster(database.pool, tenantId, passId, 'refunds');
    const { body } = parseSkillDocument(candidate!, { defaultLicense: 'Apache-2.0' });
    expect(body).toContain('Learned from 9 successful runs (90% of 10 attempts).');
    expect(body).toMatch(/^- Step 2 \(`payments\.refund`\) failed with: refund window closed: order older than 30 days \(1x\)\./m);
    expect(body).not.toContain('No failures were observed');
    expect(body).not.toContain('shipping.track');
  });
});

describe('which failed runs attempted a procedure', () => {
  const successful = (goal: string, tools: string[]): EvidenceRun => ({
    runId: goal,
    goal,
    status: 'completed',
    toolCalls: tools.map((tool) => ({ tool, success: true })),
  });
  const refunds = [
    successful('Refund order A-1 and email the receipt', ['orders.get', 'payments.refund', 'orders.update', 'email.send']),
    successful('Refund order B-2, then email the receipt', ['orders.get', 'payments.refund', 'orders.update', 'email.send']),
    successful('Please refund order C-3 and email a receipt', ['orders.get', 'payments.refund', 'orders.update', 'email.send']),
  ];

  it('one whose calls, a retry counted once, are how the procedure begins, for a goal in its words', () => {
    const tools = ['orders.get', 'payments.refund', 'payments.refund'];
    expect(attemptedProcedure({ goal: 'Refund order D-4 and email the receipt', tools }, refunds)).toBe(true);
  });

  it('not one that shares only a first call, took another path, or pursued another goal', () => {
    expect(attemptedProcedure({ goal: 'Refund order D-4 and email the receipt', tools: ['orders.get'] }, refunds)).toBe(false);
    expect(attemptedProcedure({ goal: 'Refund order D-4 and email the receipt', tools: ['orders.get', 'orders.cancel'] }, refunds)).toBe(
      false,
    );
    expect(attemptedProcedure({ goal: 'Cancel subscription D-4 now', tools: ['orders.get', 'payments.refund'] }, refunds)).toBe(false);
  });
});
