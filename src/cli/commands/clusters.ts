import type { Command } from 'commander';
import type { ClusterPassResult, GoalCluster } from '../../clustering/cluster-pass.ts';
import type { ClusterPortrait } from '../../synthesis/cluster-portrait.ts';
import type { CliContext } from '../context.ts';
import { createProgressReporter } from '../progress-reporter.ts';

/**
 * `skillsmith clusters [--tenant T] [--json]`: a dry run of the embed and cluster steps over all
 * of the tenant's runs — embeds goals that lack an embedding (stored, as a pass would), clusters,
 * and prints every cluster with its size, success rate, typical goal, consensus tools, nearest
 * cluster, and whether it qualifies or exactly why not. Distils and installs nothing.
 */
export function registerClustersCommands(program: Command, context: CliContext): void {
  program
    .command('clusters')
    .description('dry run: embed missing goals, cluster all runs, print every cluster and why it qualifies or not')
    .action(async (_options: unknown, command: Command) => {
      const { tenant, json, quiet } = command.optsWithGlobals<{ tenant: string; json: boolean; quiet: boolean }>();
      const [{ clusterRunGoals }, { embedMissingGoals }, { createEmbedder }, { loadClusterPortraits }, { configForTenant }] =
        await Promise.all([
          import('../../clustering/cluster-pass.ts'),
          import('../../embedding/embed-goals.ts'),
          import('../../embedding/embedder.ts'),
          import('../../synthesis/cluster-portrait.ts'),
          import('../../app/tenant-config.ts'),
        ]);
      const pool = await context.openPool();
      // The tenant's model and its τ and cut, as a pass would use them.
      const config = await configForTenant(pool, context.config, tenant);
      const embedder = await createEmbedder(config.embedding);
      const progress = createProgressReporter({ quiet });
      const embedding = await embedMissingGoals(pool, embedder, tenant, {
        pageSize: Math.max(config.embedding.batchSize, 256),
        onProgress: ({ embedded, total }) => {
          if (total > 0) progress.update('embedding goals', embedded, total, 'goals');
        },
      }).finally(progress.stop);
      const result = await clusterRunGoals(pool, tenant, { modelId: embedder.modelId, synthesis: config.synthesis });
      const portraits = await loadClusterPortraits(pool, result, config.synthesis);
      const clusters = result.clusters.map((cluster, index) => ({ ...cluster, ...portraits[index]! }));
      context.output.result(json, { embedding, ...result, clusters }, () => describe(result, clusters, embedding.embedded));
    });
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(0)}%`;
}

function similarityLabel({ similarity, similarityTau }: ClusterPassResult): string {
  switch (similarity.design) {
    case 'goal':
      return `goal cosine ≥ τ=${similarityTau}`;
    case 'product':
      return `goal cosine × tool-sequence similarity ≥ ${similarity.clusterTau}`;
    case 'mix':
      return `${similarity.goalWeight} × goal cosine + ${+(1 - similarity.goalWeight).toFixed(3)} × tool-sequence similarity ≥ ${similarity.clusterTau}`;
    case 'gate':
      return `goal cosine ≥ ${similarityTau} and tool-sequence similarity ≥ ${similarity.toolTau}`;
    case 'evidence':
      return `goal cosine and rarity-weighted tool-sequence similarity (goal weight ${similarity.goalWeight} against one rare tool) ≥ ${similarity.clusterTau}`;
  }
}

function describe(result: ClusterPassResult, clusters: Array<GoalCluster & ClusterPortrait>, embedded: number): string {
  const lines = [
    `tenant ${result.tenantId}: ${result.goals} runs (${embedded} goals embedded now) with ${result.modelId}, ` +
      `${result.linkage} linkage on ${similarityLabel(result)}: ${result.clusters.length} clusters, ` +
      `${result.qualifyingCount} qualifying, ${result.singletonCount} runs alone, ` +
      `${result.componentCount} threshold-graph components (largest ${result.largestComponentSize})`,
  ];
  for (const cluster of clusters) {
    lines.push(
      `  ${cluster.clusterId}  size ${cluster.size}  success ${cluster.successfulRuns}/${cluster.attempts} ` +
        `(${percent(cluster.successRate)})  ${cluster.verdict}`,
      `    typical goal: ${JSON.stringify(cluster.typicalGoal)} (run ${cluster.typicalRunId})`,
      `    tools: ${cluster.consensusTools.length ? cluster.consensusTools.join(' → ') : '(no successful run)'}`,
      `    nearest: ${cluster.nearestClusterId ? `${cluster.nearestClusterId} (goal centroid cosine ${cluster.nearestSimilarity})` : 'none'}`,
    );
  }
  return lines.join('\n');
}
