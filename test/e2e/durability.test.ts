import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { reportRunCompleted } from '../../src/client/run-intake-client.ts';
import { reviewWorkflowId } from '../../src/contracts/intake-contract.ts';
import { loadConfig } from '../../src/app/config.ts';
import { queryPassProgress, startSynthesisPass } from '../../src/client/synthesis-client.ts';
import { startScriptedLlm } from '../support/scripted-llm.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import type { PassProgress } from '../../src/contracts/pass-contract.ts';
import type { PassRecord } from '../../src/contracts/pass-record.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelDir } from '../support/test-model.ts';
import { until } from '../support/until.ts';
import { killProcess as kill, passSkills, revisionGaps, startWorkerProcess } from '../support/pass-faults.ts';
import { activateTenants } from '../support/rollout.ts';
import { createConfiguredRolloutGate } from '../../src/rollout/rollout-gate.ts';

// The two cases wait mostly on Temporal noticing a dead worker (heartbeat and start-to-close
// timeouts); they share no tenant, task queue or worker, so they wait side by side. The pass's
// heartbeat timeout is cut to 10 s (SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS, 30 s by default): still
// well above the longest silence of a live worker on a loaded machine.
describe.concurrent('durability: a pass survives its workers being SIGKILLed', () => {
  let database: TestDatabase;
  let connection: Connection;
  let client: Client;
  const workers: ChildProcess[] = [];
  const taskQueue = `durability-${Date.now()}`;
  let env: Record<string, string>;
  /**
   * Enough goals that the embed step spans several pages (three of 256: the kill lands between
   * them) and more than the pass's ten clusters qualify (47 at 600, five added and five updated).
   */
  const RUNS = 600;
  let heartbeatTimeoutSeconds: number;

  const startWorker = (workerEnv: Record<string, string>) => {
    const worker = startWorkerProcess(workerEnv);
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection });
    env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_EMBEDDING_PREFIXES: 'none',
      SKILLSMITH_MODEL_DIR: testModelDir,
      SKILLSMITH_SIMILARITY_TAU: '0.5',
      SKILLSMITH_DISTILLER: 'extractive',
    };
    heartbeatTimeoutSeconds = loadConfig({ ...env, SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS: '10' }).synthesis.heartbeatTimeoutSeconds;
    const runs = generateRuns({ seed: 21, runs: RUNS }).map(({ report }) => report);
    for (const tenantId of ['durable', 'baseline']) {
      for (let start = 0; start < runs.length; start += 500) {
        await upsertRuns(
          database.pool,
          tenantId,
          runs.slice(start, start + 500).map((report) => ({ ...report, tenantId })),
        );
      }
    }
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    await connection?.close();
    await database?.close();
  });

  const skillsOf = (tenantId: string) => passSkills(database.pool, tenantId);

  it('SIGKILL during embed and again during distill/install: a new worker finishes with exactly the skills and revisions of an uninterrupted pass', async ({
    expect,
  }) => {
    const countEmbedded = async () =>
      (await database.pool.query(`SELECT count(*)::int AS n FROM goal_embeddings WHERE tenant_id = 'durable'`)).rows[0].n as number;
    const first = startWorker(env);
    const handle = await startSynthesisPass(client, { tenantId: 'durable', full: true, taskQueue, heartbeatTimeoutSeconds });
    // Killed as soon as the first page of embeddings is written: the later pages are still to come.
    await until('the embed step to be writing', async () => ((await countEmbedded()) > 0 ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 50,
      retryErrors: true,
    });
    await kill(first);
    const embeddedAtKill = await countEmbedded();
    expect(embeddedAtKill).toBeGreaterThan(0);
    expect(embeddedAtKill).toBeLessThan(RUNS);

    // The uninterrupted pass runs beside the rest of the interrupted one, on a worker of its own
    // that is never killed: it works while the interrupted pass waits out the timeouts of its dead
    // workers (started only now, so that it does not slow the embedding the first kill waits for).
    const baselineQueue = `${taskQueue}-baseline`;
    startWorker({ ...env, TEMPORAL_TASK_QUEUE: baselineQueue });
    const baselineResult = startSynthesisPass(client, {
      tenantId: 'baseline',
      full: true,
      taskQueue: baselineQueue,
      heartbeatTimeoutSeconds,
    }).then(async (baselineHandle) => (await baselineHandle.result()) as PassRecord);
    // Settled at once, awaited at the end: a failing baseline must not be an unhandled rejection meanwhile.
    baselineResult.catch(() => undefined);

    const second = startWorker(env);
    await until(
      'a cluster to be installed',
      async () => {
        const progress: PassProgress = await queryPassProgress(handle);
        return progress.stage === 'distilling' && progress.clustersDone >= 1 ? progress : undefined;
      },
      // Under a load average of 15 on 2 cores this took over 240 s (issue #30 item 8); the test's own bound is 600 s.
      { timeoutMs: 360_000, intervalMs: 50, retryErrors: true },
    ).then((progress) => {
      // Clusters are still to come: the kill lands inside the distil/install of one of them.
      expect(progress.clustersDone).toBeLessThan(progress.clustersTotal);
    });
    await kill(second);

    startWorker(env);
    const interrupted = (await handle.result()) as PassRecord;
    expect(interrupted.status).toBe('completed');
    const history = await handle.fetchHistory();
    const attempts = (history.events ?? []).filter(
      (event) => event.activityTaskStartedEventAttributes?.attempt && event.activityTaskStartedEventAttributes.attempt > 1,
    );
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    // The setting reached the activity the first kill interrupted: the short wait was its heartbeat timeout.
    const embedScheduled = (history.events ?? []).flatMap((event) =>
      event.activityTaskScheduledEventAttributes?.activityType?.name === 'embedGoals' ? [event.activityTaskScheduledEventAttributes] : [],
    );
    expect(embedScheduled.map((scheduled) => Number(scheduled.heartbeatTimeout?.seconds))).toEqual([heartbeatTimeoutSeconds]);

    const baseline = await baselineResult;
    expect(baseline.status).toBe('completed');
    expect(interrupted.counts).toEqual(baseline.counts);
    // Installs and updates both happened: the revision check below has revisions past 1 to check.
    expect(baseline.counts.added).toBeGreaterThan(0);
    expect(baseline.counts.updated).toBeGreaterThan(0);

    const durableSkills = await skillsOf('durable');
    expect(durableSkills.length).toBeGreaterThan(0);
    expect(durableSkills).toEqual(await skillsOf('baseline'));
    expect(revisionGaps(durableSkills)).toEqual([]);
    const embeddings = await database.pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT run_id)::int AS runs FROM goal_embeddings WHERE tenant_id = 'durable'`,
    );
    expect(embeddings.rows[0]).toEqual({ n: RUNS, runs: RUNS });
  }, 600_000);

  it('gate.skill.review_never_fatal: the worker killed once the run is recorded and its review enqueued — the review still happens, once, and the run is untouched', async ({
    expect,
  }) => {
    const llm = await startScriptedLlm(() => ({ content: JSON.stringify({ done: true, decision: 'none', summary: 'nothing new' }) }));
    const reviewEnv = {
      ...env,
      TEMPORAL_TASK_QUEUE: `${taskQueue}-review`,
      SKILLSMITH_AUTHORING_ENABLED: 'true',
      SKILLSMITH_REVIEW_ENABLED: 'true',
      SKILLSMITH_LLM_BASE_URL: llm.baseUrl,
    };
    try {
      // The worker process runs the combination reviewEnv configures: activate the tenant for it.
      await activateTenants(createConfiguredRolloutGate(database.pool, loadConfig(reviewEnv)), ['reviews']);
      const first = startWorker(reviewEnv);
      const runId = `killed-${Date.now()}`;
      const report = {
        tenantId: 'reviews',
        agentId: 'agent-1',
        runId,
        goal: 'Rotate the payments API key',
        status: 'completed',
        startedAt: '2026-11-01T10:00:00Z',
        completedAt: '2026-11-01T10:01:00Z',
        toolCalls: [{ tool: 'keys.rotate', success: true }],
      };
      await reportRunCompleted(client, report, { taskQueue: reviewEnv.TEMPORAL_TASK_QUEUE });
      // The intake starts the review only after recording the run: killed the moment the review
      // workflow exists, before (or as) the worker starts on it.
      await until(
        'the review to be enqueued',
        async () => ((await client.workflow.getHandle(reviewWorkflowId('reviews', runId)).describe()) ? true : undefined),
        { timeoutMs: 120_000, intervalMs: 50, retryErrors: true },
      );
      await kill(first);
      const { rows: recordedRows } = await database.pool.query(
        `SELECT content_sha256 FROM runs WHERE tenant_id = 'reviews' AND run_id = $1`,
        [runId],
      );
      const recorded = recordedRows[0]?.content_sha256 as string | undefined;
      expect(recorded).toMatch(/^[0-9a-f]{64}$/);
      startWorker(reviewEnv);
      const review = await until(
        'the review to finish',
        async () => {
          const { rows } = await database.pool.query(`SELECT status, decision FROM reviews WHERE tenant_id = 'reviews' AND run_id = $1`, [
            runId,
          ]);
          return rows[0] && rows[0].status !== 'running' ? rows[0] : undefined;
        },
        { timeoutMs: 180_000, retryErrors: true },
      );
      expect(review).toEqual({ status: 'completed', decision: 'none' });
      const counts = await database.pool.query(
        `SELECT (SELECT count(*)::int FROM reviews WHERE tenant_id = 'reviews') AS reviews,
                (SELECT count(*)::int FROM runs WHERE tenant_id = 'reviews') AS runs,
                (SELECT content_sha256 FROM runs WHERE tenant_id = 'reviews' AND run_id = $1) AS sha`,
        [runId],
      );
      expect(counts.rows[0]).toEqual({ reviews: 1, runs: 1, sha: recorded });
    } finally {
      await llm.close();
    }
  }, 240_000);
});
