import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClustersCommands } from '../../src/cli/commands/clusters.ts';
import { registerModelsCommands } from '../../src/cli/commands/models.ts';
import type { CliContext, Output } from '../../src/cli/context.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelDir } from '../support/test-model.ts';

describe('skillsmith clusters (dry run) and skillsmith models', () => {
  let database: TestDatabase;
  const printed: { json: boolean; value: unknown; text: string }[] = [];
  const output: Output = {
    result(json, value, human) {
      printed.push({ json, value, text: human() });
    },
  };

  function run(argv: string[]) {
    const config = loadConfig({
      SKILLSMITH_MODEL_DIR: testModelDir,
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_EMBEDDING_PREFIXES: 'none',
      SKILLSMITH_SIMILARITY_TAU: '0.7',
    });
    // Only what these two commands use; the rest of the context is the CLI's business.
    const context = {
      config,
      logger: createLogger('silent'),
      output,
      databaseUrl: async () => database.url,
      openPool: async () => database.pool,
    } satisfies Partial<CliContext> as CliContext;
    const program = new Command('skillsmith')
      .option('--tenant <tenant>', 'tenant id', 'default')
      .option('--json', 'machine-readable output', false)
      .exitOverride();
    registerClustersCommands(program, context);
    registerModelsCommands(program, context);
    return program.parseAsync(argv, { from: 'user' });
  }

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    const runs = generateRuns({ seed: 2, runs: 80, tenantId: 'acme', families: ['deploy-service', 'triage-ci-failure', 'rotate-api-key'] });
    await upsertRuns(
      database.pool,
      'acme',
      runs.map((generated) => generated.report),
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  it('embeds the missing goals, then prints every cluster with its size, success rate and verdict', async () => {
    await run(['clusters', '--tenant', 'acme']);
    const { text } = printed.at(-1)!;
    const lines = text.split('\n');
    expect(lines[0]).toMatch(
      /^tenant acme: 80 runs \(80 goals embedded now\) with sentence-transformers\/all-MiniLM-L6-v2, average linkage on goal cosine and rarity-weighted tool-sequence similarity \(goal weight 0\.5 against one rare tool\) ≥ 0\.75: \d+ clusters, \d+ qualifying/,
    );
    const clusterLines = lines.slice(1);
    expect(clusterLines.length).toBeGreaterThan(0);
    expect(clusterLines.length % 4).toBe(0);
    for (let at = 0; at < clusterLines.length; at += 4) {
      const [head, goal, tools, nearest] = clusterLines.slice(at, at + 4);
      expect(head).toMatch(
        /^ {2}[0-9a-f]{16} {2}size \d+ {2}success \d+\/\d+ \(\d+%\) {2}(qualifies \(rank \d+\): \d+ successful runs ≥ \d+, success \d+% ≥ \d+%, longest sequence \d+ ≥ \d+ steps|does not qualify: .+)$/,
      );
      expect(goal).toMatch(/^ {4}typical goal: ".+" \(run .+\)$/);
      expect(tools).toMatch(/^ {4}tools: (\S+( → \S+)*|\(no successful run\))$/);
      expect(nearest).toMatch(/^ {4}nearest: ([0-9a-f]{16} \(goal centroid cosine -?[0-9.]+\)|none)$/);
    }
    expect(clusterLines.some((line) => line.includes('qualifies (rank 1)'))).toBe(true);
  });

  it('prints machine output with --json and reuses the stored embeddings', async () => {
    await run(['clusters', '--tenant', 'acme', '--json']);
    const { json, value } = printed.at(-1)!;
    expect(json).toBe(true);
    const result = value as {
      embedding: { embedded: number };
      goals: number;
      similarity: { design: string; clusterTau: number; goalWeight: number };
      clusters: { qualifies: boolean; reason?: { code: string } }[];
    };
    expect(result.embedding.embedded).toBe(0);
    // Unset, the clustering settings are the embedding model's measured defaults.
    expect(result.similarity).toMatchObject({ design: 'evidence', clusterTau: 0.75, goalWeight: 0.5 });
    expect(result.goals).toBe(80);
    for (const cluster of result.clusters) expect(cluster.qualifies || typeof cluster.reason?.code === 'string').toBe(true);
  });

  it("--json carries each cluster's typical goal (a member), consensus tools, nearest cluster and verdict", async () => {
    await run(['clusters', '--tenant', 'acme', '--json']);
    const result = printed.at(-1)!.value as {
      clusters: Array<{
        clusterId: string;
        runIds: string[];
        qualifies: boolean;
        typicalRunId: string;
        typicalGoal: string;
        consensusTools: string[];
        nearestClusterId: string | null;
        nearestSimilarity: number | null;
        verdict: string;
      }>;
    };
    expect(result.clusters.length).toBeGreaterThan(1);
    const ids = new Set(result.clusters.map((cluster) => cluster.clusterId));
    for (const cluster of result.clusters) {
      expect(cluster.runIds).toContain(cluster.typicalRunId);
      expect(cluster.typicalGoal.length).toBeGreaterThan(0);
      expect(ids.has(cluster.nearestClusterId!)).toBe(true);
      expect(cluster.nearestClusterId).not.toBe(cluster.clusterId);
      expect(cluster.nearestSimilarity).toBeGreaterThan(-1);
      expect(cluster.verdict).toMatch(cluster.qualifies ? /^qualifies \(rank \d+\): / : /^does not qualify: /);
      if (cluster.qualifies) expect(cluster.consensusTools.length).toBeGreaterThan(0);
    }
  });

  it('models list shows the test model as present, its int8-kernel export, the registry-shipped candidates and nomic from the hub', async () => {
    await run(['models', 'list', '--json']);
    const { value } = printed.at(-1)!;
    expect(value).toMatchObject({
      models: [
        { modelId: 'sentence-transformers/all-MiniLM-L6-v2', dimension: 384, source: 'pypi', present: true, configured: true },
        { modelId: 'Xenova/all-MiniLM-L6-v2', dimension: 384, source: 'pypi+maven', configured: false },
        { modelId: 'Xenova/bge-small-en-v1.5', dimension: 384, prefixes: 'bge', source: 'pypi+maven', present: true, configured: false },
        { modelId: 'Xenova/e5-small-v2', dimension: 384, prefixes: 'e5', source: 'pypi+maven', configured: false },
        { modelId: 'nomic-ai/nomic-embed-text-v1.5', dimension: 768, source: 'hub', present: false, configured: false },
      ],
    });
  });
});
