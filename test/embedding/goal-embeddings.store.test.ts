import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterActivities, type ClusterGoalsResult, type ClusterPassRunsResult } from '../../activities/cluster.ts';
import { createPassActivities, type SelectedPassClusters } from '../../activities/passes.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { createEmbedActivities } from '../../activities/embed.ts';
import { clusterRunGoals, GoalsNotEmbedded } from '../../src/clustering/cluster-pass.ts';
import { loadConfig } from '../../src/app/config.ts';
import { embedMissingGoals, withGoalTextCache } from '../../src/embedding/embed-goals.ts';
import { normaliseGoalText } from '../../src/embedding/goal-text.ts';
import { dot } from '../../src/clustering/cosine.ts';
import { createEmbedder, type Embedder } from '../../src/embedding/embedder.ts';
import { EmbeddingDimensionMismatch } from '../../src/embedding/embedding-errors.ts';
import {
  countGoalsWithoutEmbedding,
  ensureEmbeddingModel,
  findGoalsWithoutEmbedding,
  insertGoalEmbeddings,
  listEmbeddingModels,
  loadGoalEmbeddings,
} from '../../src/embedding/goal-embedding-repository.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { beginPassRecord, listPassClusters } from '../../src/synthesis/pass-repository.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelDir, testModelSettings } from '../support/test-model.ts';

function unit(dimension: number, seed: number): Float32Array {
  const values = Float32Array.from({ length: dimension }, (_, index) => Math.sin(seed * 7.1 + index * 1.3));
  const norm = Math.hypot(...values);
  return values.map((value) => value / norm);
}

/** The real embedder, counted where texts enter it: every text it is given runs through the model. */
function counting(embedder: Embedder): { counted: Embedder; modelInputs: string[] } {
  const modelInputs: string[] = [];
  const counted: Embedder = {
    modelId: embedder.modelId,
    dimension: embedder.dimension,
    embed(texts, kind, options) {
      modelInputs.push(...texts);
      return embedder.embed(texts, kind, options);
    },
  };
  return { counted, modelInputs };
}

describe('goal embeddings store', () => {
  let database: TestDatabase;
  let embedder: Embedder;

  beforeAll(async () => {
    await requireTestModel();
    embedder = await createEmbedder(testModelSettings());
    database = await openTestDatabase();
    await upsertRuns(
      database.pool,
      'acme',
      generateRuns({ seed: 3, runs: 12, tenantId: 'acme' }).map((run) => run.report),
    );
    await upsertRuns(
      database.pool,
      'other',
      generateRuns({ seed: 4, runs: 3, tenantId: 'other' }).map((run) => run.report),
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  it('records a model dimension per tenant and refuses a model whose dimension differs, naming both', async () => {
    await ensureEmbeddingModel(database.pool, 'dims', { modelId: 'model-a', dimension: 4 });
    await ensureEmbeddingModel(database.pool, 'dims', { modelId: 'model-a', dimension: 4 });
    await expect(ensureEmbeddingModel(database.pool, 'dims', { modelId: 'model-a', dimension: 8 })).rejects.toThrow(
      EmbeddingDimensionMismatch,
    );
    const error = await ensureEmbeddingModel(database.pool, 'dims', { modelId: 'model-b', dimension: 8 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(EmbeddingDimensionMismatch);
    expect((error as Error).message).toContain('model-b produces 8-d vectors but 4-d are expected');
    expect((error as Error).message).toContain('tenant dims stores 4-d embeddings of model-a');
    // Nothing was recorded for the refused model; a same-dimension model is accepted.
    await ensureEmbeddingModel(database.pool, 'dims', { modelId: 'model-c', dimension: 4 });
    expect(await listEmbeddingModels(database.pool, 'dims')).toEqual([
      { modelId: 'model-a', dimension: 4 },
      { modelId: 'model-c', dimension: 4 },
    ]);
  });

  it('stores vectors exactly, once per (tenant, run, model), and finds the goals still missing', async () => {
    const model = { modelId: 'unit-test-model', dimension: 5 };
    await ensureEmbeddingModel(database.pool, 'acme', model);
    const missingBefore = await findGoalsWithoutEmbedding(database.pool, 'acme', model.modelId, { limit: 100 });
    expect(missingBefore).toHaveLength(12);
    const rows = missingBefore.slice(0, 4).map((goal, index) => ({ runId: goal.runId, embedding: unit(5, index) }));
    expect(await insertGoalEmbeddings(database.pool, 'acme', model, rows)).toBe(4);
    expect(await insertGoalEmbeddings(database.pool, 'acme', model, rows)).toBe(0);
    expect(await countGoalsWithoutEmbedding(database.pool, 'acme', model.modelId)).toBe(8);
    const loaded = await loadGoalEmbeddings(database.pool, 'acme', model.modelId, { pageSize: 3 });
    expect(loaded.runIds).toEqual(rows.map((row) => row.runId).sort());
    const byRun = new Map(rows.map((row) => [row.runId, row.embedding]));
    loaded.runIds.forEach((runId, index) => expect(loaded.vectors[index]).toEqual(byRun.get(runId)));
    // Keyset paging and tenant isolation.
    const page = await findGoalsWithoutEmbedding(database.pool, 'acme', model.modelId, { limit: 3, afterRunId: missingBefore[5]!.runId });
    expect(page.map((goal) => goal.runId)).toEqual(missingBefore.slice(6, 9).map((goal) => goal.runId));
    expect(await countGoalsWithoutEmbedding(database.pool, 'other', model.modelId)).toBe(3);
    expect((await loadGoalEmbeddings(database.pool, 'other', model.modelId)).runIds).toEqual([]);
  });

  it('refuses a vector of the wrong dimension and writes nothing', async () => {
    const model = { modelId: 'unit-test-model', dimension: 5 };
    const [goal] = await findGoalsWithoutEmbedding(database.pool, 'acme', model.modelId, { limit: 1 });
    await expect(insertGoalEmbeddings(database.pool, 'acme', model, [{ runId: goal!.runId, embedding: unit(6, 1) }])).rejects.toThrow(
      EmbeddingDimensionMismatch,
    );
    expect(await countGoalsWithoutEmbedding(database.pool, 'acme', model.modelId)).toBe(8);
  });

  it('embeds every missing goal with the real model in pages, then reuses the cache', async () => {
    const progress: number[] = [];
    const first = await embedMissingGoals(database.pool, embedder, 'other', {
      pageSize: 2,
      onProgress: ({ embedded }) => progress.push(embedded),
    });
    expect(first).toMatchObject({ missing: 3, embedded: 3, dimension: 384, modelId: embedder.modelId });
    expect(progress).toEqual([0, 2, 3]);
    const again = await embedMissingGoals(database.pool, embedder, 'other', { pageSize: 2 });
    expect(again).toMatchObject({ missing: 0, embedded: 0 });
  });

  it('reports progress after every embedder batch inside a page, so a slow page still heartbeats', async () => {
    await upsertRuns(
      database.pool,
      'batches',
      generateRuns({ seed: 5, runs: 3, tenantId: 'batches' }).map((run) => run.report),
    );
    const progress: number[] = [];
    const oneAtATime = await createEmbedder(testModelSettings({ batchSize: 1 }));
    await embedMissingGoals(database.pool, oneAtATime, 'batches', { pageSize: 3, onProgress: ({ embedded }) => progress.push(embedded) });
    expect(progress).toEqual([0, 1, 2, 3]);
  });

  it('embeds each distinct goal text once per tenant and model: repeated goals never reach the model again', async () => {
    const { counted, modelInputs } = counting(embedder);
    const goals = [
      'deploy billing-api to staging',
      '  deploy   billing-api\tto staging ',
      'rotate the API key for payments',
      'page the on-call engineer',
    ];
    const runsWith = (seed: number, count: number, tenantId: string) =>
      generateRuns({ seed, runs: count, tenantId }).map((run, index) => ({ ...run.report, goal: goals[index % goals.length]! }));
    const firstRuns = runsWith(21, 10, 'dupes');
    await upsertRuns(database.pool, 'dupes', firstRuns);

    const first = await embedMissingGoals(database.pool, counted, 'dupes', { pageSize: 4 });
    expect(first).toMatchObject({ missing: 10, embedded: 10, textsEmbedded: 3 });
    expect(modelInputs.sort()).toEqual(['deploy billing-api to staging', 'page the on-call engineer', 'rotate the API key for payments']);

    // Later runs with goals seen before cost no model call; a new goal costs exactly one.
    modelInputs.length = 0;
    const laterRuns = [...runsWith(22, 6, 'dupes'), { ...runsWith(23, 1, 'dupes')[0]!, goal: 'close the stale issues' }];
    await upsertRuns(database.pool, 'dupes', laterRuns);
    const later = await embedMissingGoals(database.pool, counted, 'dupes', { pageSize: 4 });
    expect(later).toMatchObject({ missing: 7, embedded: 7, textsEmbedded: 1 });
    expect(modelInputs).toEqual(['close the stale issues']);

    // Every run of one goal text has that text's vector, the one the model gives it directly.
    const stored = await loadGoalEmbeddings(database.pool, 'dupes', embedder.modelId);
    const goalOf = new Map([...firstRuns, ...laterRuns].map((run) => [run.runId, normaliseGoalText(run.goal)]));
    const direct = new Map<string, Float32Array>();
    for (const text of new Set(goalOf.values())) direct.set(text, (await embedder.embed([text], 'goal'))[0]!);
    expect(stored.runIds).toHaveLength(17);
    stored.runIds.forEach((runId, index) => expect(dot(stored.vectors[index]!, direct.get(goalOf.get(runId)!)!)).toBeGreaterThan(0.9999));

    // The cache is the tenant's own: another tenant with the same goals embeds them itself.
    modelInputs.length = 0;
    await upsertRuns(database.pool, 'dupes-other', runsWith(24, 4, 'dupes-other'));
    expect(await embedMissingGoals(database.pool, counted, 'dupes-other', { pageSize: 4 })).toMatchObject({
      embedded: 4,
      textsEmbedded: 3,
    });
    expect(modelInputs).toHaveLength(3);
  });

  it('withGoalTextCache: a review’s goals reuse the vectors a pass cached, cache what they embed, and skip the cache for a tenant of another dimension', async () => {
    const { counted, modelInputs } = counting(embedder);
    // A pass embeds the tenant's goals (and caches their texts); a review then recalls for goals old and new.
    await upsertRuns(database.pool, 'reviewed', [
      { ...generateRuns({ seed: 31, runs: 1, tenantId: 'reviewed' })[0]!.report, goal: 'restart the ingest worker' },
    ]);
    await embedMissingGoals(database.pool, counted, 'reviewed', { pageSize: 10 });
    modelInputs.length = 0;
    const cached = withGoalTextCache(database.pool, counted, 'reviewed');
    const vectors = await cached.embed([' restart  the ingest worker', 'drain the billing queue'], 'goal');
    expect(modelInputs).toEqual(['drain the billing queue']);
    const direct = await embedder.embed(['restart the ingest worker', 'drain the billing queue'], 'goal');
    vectors.forEach((vector, index) => expect(dot(vector, direct[index]!)).toBeGreaterThan(0.9999));
    // What the review embedded is cached for the next pass and review.
    modelInputs.length = 0;
    await cached.embed(['drain the billing queue'], 'goal');
    expect(modelInputs).toEqual([]);
    // Queries and documents are not goals: they always reach the model.
    await cached.embed(['drain the billing queue'], 'query');
    expect(modelInputs).toEqual(['drain the billing queue']);

    // A tenant whose stored vectors have another dimension cannot cache this model's: the goals are embedded, not refused.
    await ensureEmbeddingModel(database.pool, 'reviewed-dims', { modelId: 'older-model', dimension: 8 });
    modelInputs.length = 0;
    const uncached = await withGoalTextCache(database.pool, counted, 'reviewed-dims').embed(['drain the billing queue'], 'goal');
    expect(modelInputs).toEqual(['drain the billing queue']);
    expect(dot(uncached[0]!, direct[1]!)).toBeGreaterThan(0.9999);
  });

  it('refuses to embed with a model whose dimension differs from the tenant’s stored one', async () => {
    const smaller: Embedder = { modelId: 'other-model', dimension: 16, embed: async () => [] };
    await expect(embedMissingGoals(database.pool, smaller, 'other', { pageSize: 10 })).rejects.toThrow(
      /other-model produces 16-d vectors but 384-d are expected/,
    );
  });
});

describe('embed and cluster activities', () => {
  let database: TestDatabase;
  let embedder: Embedder;
  let distinctGoals: number;
  const config = loadConfig({
    SKILLSMITH_MODEL_DIR: testModelDir,
    SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
    SKILLSMITH_EMBEDDING_PREFIXES: 'none',
    SKILLSMITH_SIMILARITY_TAU: '0.7',
  });

  beforeAll(async () => {
    await requireTestModel();
    embedder = await createEmbedder(config.embedding);
    database = await openTestDatabase();
    const runs = generateRuns({ seed: 11, runs: 60, tenantId: 'acme', families: ['deploy-service', 'triage-ci-failure'] });
    distinctGoals = new Set(runs.map((run) => normaliseGoalText(run.report.goal))).size;
    await upsertRuns(
      database.pool,
      'acme',
      runs.map((run) => run.report),
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  it('refuses to cluster before the goals are embedded', async () => {
    await expect(clusterRunGoals(database.pool, 'acme', { modelId: embedder.modelId, synthesis: config.synthesis })).rejects.toThrow(
      GoalsNotEmbedded,
    );
  });

  it('embedGoals stops between pages when cancelled and keeps the pages already written', async () => {
    await upsertRuns(
      database.pool,
      'cancel',
      generateRuns({ seed: 12, runs: 600, tenantId: 'cancel' }).map((run) => run.report),
    );
    const environment = new MockActivityEnvironment();
    let calls = 0;
    const cancelling: Embedder = {
      modelId: embedder.modelId,
      dimension: embedder.dimension,
      async embed(texts, kind) {
        calls += 1;
        const vectors = await embedder.embed(texts, kind);
        if (calls === 1) environment.cancel();
        return vectors;
      },
    };
    const { embedGoals } = createEmbedActivities({ pool: database.pool, embedder: async () => cancelling, config });
    await expect(environment.run(embedGoals, { tenantId: 'cancel' })).rejects.toThrow();
    expect(calls).toBe(1);
    // The first page (256 goals) was stored; nothing after it.
    expect(await countGoalsWithoutEmbedding(database.pool, 'cancel', embedder.modelId)).toBe(600 - 256);
  });

  it('embedGoals heartbeats its progress and returns counts only', async () => {
    const environment = new MockActivityEnvironment();
    const heartbeats: unknown[] = [];
    environment.on('heartbeat', (details: unknown) => heartbeats.push(details));
    const { embedGoals } = createEmbedActivities({ pool: database.pool, embedder: async () => embedder, config });
    const result = await environment.run(embedGoals, { tenantId: 'acme' });
    expect(result).toEqual({
      tenantId: 'acme',
      modelId: embedder.modelId,
      dimension: 384,
      missing: 60,
      embedded: 60,
      textsEmbedded: distinctGoals,
    });
    expect(heartbeats.at(-1)).toEqual({ embedded: 60, total: 60 });
  });

  it('clusterGoals finds the recurring tasks and returns ids and counts only', async () => {
    const { clusterGoals } = createClusterActivities({ pool: database.pool, tenantConfig: async () => config });
    const result: ClusterGoalsResult = await new MockActivityEnvironment().run(clusterGoals, { tenantId: 'acme' });
    expect(result.goals).toBe(60);
    expect(result.qualifying.length).toBeGreaterThanOrEqual(1);
    for (const cluster of result.qualifying) {
      expect(cluster.clusterId).toMatch(/^[0-9a-f]{16}$/);
      expect(cluster.successRate).toBeGreaterThanOrEqual(config.synthesis.minSuccessRate);
    }
    expect(JSON.stringify(result).length).toBeLessThan(10_000);
  });

  it('clusterPassRuns records every cluster of the pass once, and selectPassClusters returns the qualifying keys in rank order', async () => {
    const passId = 'synthesis/acme/2026-11-29T00:00:00Z';
    await beginPassRecord(database.pool, {
      tenantId: 'acme',
      id: passId,
      workflowRunId: 'r1',
      full: true,
      since: null,
      distiller: 'extractive',
    });
    const { clusterPassRuns } = createClusterActivities({ pool: database.pool, tenantConfig: async () => config });
    const { selectPassClusters } = createPassActivities({
      pool: database.pool,
      config,
      tenantConfig: async () => config,
      logger: createLogger('silent'),
    });
    const environment = new MockActivityEnvironment();
    const first: ClusterPassRunsResult = await environment.run(clusterPassRuns, { tenantId: 'acme', passId });
    const again: ClusterPassRunsResult = await environment.run(clusterPassRuns, { tenantId: 'acme', passId });
    expect(again).toEqual(first);
    const stored = await listPassClusters(database.pool, 'acme', passId);
    expect(stored).toHaveLength(first.clusterCount);
    const qualifying = stored.filter((cluster) => cluster.qualifying).sort((a, b) => a.rank! - b.rank!);
    const selected: SelectedPassClusters = await environment.run(selectPassClusters, { tenantId: 'acme', passId });
    expect(qualifying.map((cluster) => cluster.clusterKey)).toEqual(selected.clusterKeys);
    for (const cluster of stored) {
      expect(cluster.qualifying || cluster.reason !== null).toBe(true);
      expect(cluster.successfulRunIds.every((runId) => cluster.runIds.includes(runId))).toBe(true);
      expect(cluster.successfulRunIds).toHaveLength(cluster.successful);
    }
  });
});
