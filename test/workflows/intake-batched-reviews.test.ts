import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunIntake } from '../../src/app/run-intake.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { listProcedures } from '../../src/procedures/procedure-repository.ts';
import { countRuns } from '../../src/runs/run-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { activateTenants } from '../support/rollout.ts';
import { startScriptedLlm, type ChatCompletionRequest, type ScriptedAnswer, type ScriptedLlm } from '../support/scripted-llm.ts';
import { ingest, startSynthesisHarness, synthesisTestConfig, taskRuns, type SynthesisHarness } from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';
import { until } from '../support/until.ts';

/**
 * Reviews keep pace with recording: the runs of one intake batch are reviewed by one review
 * execution (runReviews), each run exactly once, and a review that fails fails alone — its run
 * stays recorded and the intake goes on.
 */

const ROTATE_TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write'];
const ROTATE_GOALS = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key',
];

let sequence = 0;
const report = (tenantId: string, goal = 'Rotate the payments API key') => ({
  tenantId,
  agentId: 'agent-batch',
  runId: `run-${Date.now()}-${String(sequence++).padStart(4, '0')}`,
  goal,
  status: 'completed',
  startedAt: '2026-11-01T10:00:00Z',
  completedAt: '2026-11-01T10:01:00Z',
  toolCalls: ROTATE_TOOLS.map((tool) => ({ tool, success: true })),
});

describe('batched background reviews', () => {
  let database: TestDatabase;
  let llm: ScriptedLlm;
  let harness: SynthesisHarness;
  /** The reviewer answers garbage for runs whose goal mentions "poison". */
  const review = (request: ChatCompletionRequest): ScriptedAnswer =>
    request.messages.some((message) => message.content.includes('poison'))
      ? { content: 'I think this run went great!' }
      : { content: JSON.stringify({ done: true, decision: 'none', summary: 'nothing to keep' }) };

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    llm = await startScriptedLlm((request) =>
      request.messages[0]!.content.startsWith('You review a finished run') ? review(request) : { content: 'SKIP' },
    );
    const config = synthesisTestConfig({ llmBaseUrl: llm.baseUrl, taskQueue: `batched-reviews-${Date.now()}` });
    harness = await startSynthesisHarness(database, {
      ...config,
      synthesis: { ...config.synthesis, distiller: 'extractive', minOccurrences: 3, minSuccessRate: 0.5 },
      authoring: { ...config.authoring, enabled: true, reviewEnabled: true },
    });
    await activateTenants(harness.services.rollout, ['batch-llm']);
  });

  afterAll(async () => {
    await harness?.close();
    await llm?.close();
    await database?.close();
  });

  const reviewExecutions = async (tenantId: string) => {
    const executions: Array<{ workflowId: string; type: string }> = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId STARTS_WITH 'review/${tenantId}/'` }))
      executions.push({ workflowId: execution.workflowId, type: execution.type });
    return executions;
  };
  const reviewsOf = async (tenantId: string) =>
    (
      await database.pool.query<{ run_id: string; status: string; decision: string | null; error: string | null }>(
        'SELECT run_id, status, decision, error FROM reviews WHERE tenant_id = $1 ORDER BY run_id',
        [tenantId],
      )
    ).rows;

  it('reviews each of 30 runs of a populated tenant exactly once, in fewer review executions than runs', async () => {
    const tenantId = 'batch-track';
    await ingest(database, taskRuns('learn', ROTATE_GOALS, ROTATE_TOOLS, { tenantId }), tenantId);
    expect((await harness.runPass({ tenantId })).record.counts.added).toBe(1);
    const [before] = await listProcedures(database.pool, tenantId);

    const bodies = Array.from({ length: 30 }, () => report(tenantId));
    await Promise.all(bodies.map((body) => harness.services.reportRun(body)));
    // Every run reported again: recorded and reviewed once all the same.
    await Promise.all(bodies.slice(0, 10).map((body) => harness.services.reportRun(body)));
    await until('30 finished reviews', async () => {
      const reviews = await reviewsOf(tenantId);
      return reviews.length === 30 && reviews.every((review) => review.status !== 'running') ? reviews : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const reviews = await reviewsOf(tenantId);
    expect(reviews.map((review) => review.run_id)).toEqual(bodies.map((body) => body.runId).sort());
    expect(reviews.every((review) => review.status === 'completed' && review.decision === 'track_record_only')).toBe(true);
    // Each run observed the procedure once: 30 attempts more, however often it was reported.
    const [after] = await listProcedures(database.pool, tenantId);
    expect(after!.observedAttempts - before!.observedAttempts).toBe(30);
    const observations = await database.pool.query('SELECT count(*)::int AS n FROM procedure_observations WHERE tenant_id = $1', [
      tenantId,
    ]);
    expect(observations.rows[0].n).toBe(30);

    const executions = await reviewExecutions(tenantId);
    expect(executions.length).toBeGreaterThan(0);
    expect(executions.length).toBeLessThan(30);
    expect(executions.every((execution) => execution.type === 'runReviews')).toBe(true);
    // Readable ids: the tenant and the batch's first and last runs.
    for (const { workflowId } of executions)
      expect(workflowId).toMatch(new RegExp(`^review/${tenantId}/run-[^/]+(\\.\\.run-.+\\+\\d+-[0-9a-f]{8})?$`));

    if (process.env.SKILLSMITH_RECORD_HISTORIES) {
      // Refreshes the replay fixtures (test/workflows/replay.test.ts) after an intended workflow change.
      const { recordHistory } = await import('../support/histories.ts');
      // Once every review has closed (the intake records their completion) and the intake waits again.
      for (const { workflowId } of executions) await harness.client.workflow.getHandle(workflowId).result();
      const { EventType } = temporal.api.enums.v1;
      const intake = harness.client.workflow.getHandle(`intake/${tenantId}/agent-batch`);
      const history = await until('the intake idle', async () => {
        const fetched = await intake.fetchHistory();
        const last = fetched.events?.at(-1)?.eventType;
        return last === EventType.EVENT_TYPE_TIMER_STARTED || last === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED ? fetched : undefined;
      });
      await recordHistory('run-intake-batched-reviews', intake.workflowId, history);
      const batch = executions.find((execution) => execution.workflowId.includes('..'))!;
      const review = harness.client.workflow.getHandle(batch.workflowId);
      await recordHistory('run-reviews', batch.workflowId, await review.fetchHistory());
    }
  });

  it("reviews nothing before a tenant's first procedure (no workflow started), and the runs after the pass installed it, of any agent", async () => {
    const tenantId = 'first-procedure';
    // The door believes "no procedures" for 10 minutes: only the install's note can make it ask again.
    // Its LLM review is off (the tenant is not activated either), so procedures are what a review wants a run for.
    const reportRun = createRunIntake({
      config: { ...harness.config, authoring: { ...harness.config.authoring, reviewEnabled: false } },
      pool: database.pool,
      logger: createLogger('silent'),
      temporalAddress: undefined,
      temporal: async () => harness.client,
      procedurePresenceTtlMs: 600_000,
    });
    const early = report(tenantId);
    expect(await reportRun(early)).toMatchObject({ workflowId: `intake/${tenantId}/agent-batch`, review: 'none' });
    expect((await countRuns(database.pool, tenantId)).runs).toBe(1);
    await expect(harness.client.workflow.getHandle(`intake/${tenantId}/agent-batch`).describe()).rejects.toThrow(/not found/i);

    // The pass runs on this process's worker: installing the first procedure tells the door.
    await ingest(database, taskRuns('learn', ROTATE_GOALS, ROTATE_TOOLS, { tenantId }), tenantId);
    expect((await harness.runPass({ tenantId })).record.counts.added).toBe(1);
    const later = ['agent-a', 'agent-b', 'agent-c'].flatMap((agentId) => [0, 1].map(() => ({ ...report(tenantId), agentId })));
    const accepted = await Promise.all(later.map((body) => reportRun(body)));
    expect(accepted.map((run) => run.review)).toEqual(later.map(() => 'scheduled'));
    // One intake per tenant: every answer names the one intake its run was signalled to, whichever agent's.
    const intakes = new Set(accepted.map((run) => run.workflowId));
    expect(intakes.size).toBe(1);
    const [intake] = intakes;
    expect(later.map((body) => `intake/${tenantId}/${body.agentId}`)).toContain(intake);
    await expect(harness.client.workflow.getHandle(intake!).describe()).resolves.toMatchObject({ workflowId: intake });
    const reviews = await until('6 finished reviews', async () => {
      const found = await reviewsOf(tenantId);
      return found.length === 6 && found.every((review) => review.status !== 'running') ? found : undefined;
    });
    expect(reviews.map((review) => review.run_id)).toEqual(later.map((body) => body.runId).sort());
    expect(reviews.every((review) => review.status === 'completed' && review.decision === 'track_record_only')).toBe(true);
  });

  it('gate.skill.review_never_fatal: a failing review fails only its run, once; every run stays recorded and the intake goes on', async () => {
    const tenantId = 'batch-llm';
    const bodies = Array.from({ length: 12 }, (_, index) =>
      report(tenantId, index % 4 === 0 ? 'Rotate the poison key' : 'Rotate the payments API key'),
    );
    await Promise.all(bodies.map((body) => harness.services.reportRun(body)));
    expect((await countRuns(database.pool, tenantId)).runs).toBe(12);
    const reviews = await until('12 finished reviews', async () => {
      const rows = await reviewsOf(tenantId);
      return rows.length === 12 && rows.every((row) => row.status !== 'running') ? rows : undefined;
    });
    const poisoned = new Set(bodies.filter((body) => body.goal.includes('poison')).map((body) => body.runId));
    for (const row of reviews) {
      if (poisoned.has(row.run_id)) {
        expect(row).toMatchObject({ status: 'failed' });
        expect(row.error).toMatch(/ReviewAnswerMalformed/);
      } else {
        expect(row).toMatchObject({ status: 'completed', decision: 'none' });
      }
    }
    for (const runId of poisoned) expect(harness.logLines.filter((line) => line.includes(`review of run ${runId} failed`))).toHaveLength(1);
    expect((await reviewExecutions(tenantId)).length).toBeLessThan(12);

    const next = report(tenantId);
    await harness.services.reportRun(next);
    expect((await countRuns(database.pool, tenantId)).runs).toBe(13);
    await until('the next run reviewed', async () =>
      (await reviewsOf(tenantId)).some((row) => row.run_id === next.runId && row.status === 'completed') ? true : undefined,
    );
    const intake = await harness.client.workflow.getHandle(`intake/${tenantId}/agent-batch`).describe();
    expect(intake.status.name).toBe('RUNNING');
  });
});
