/**
 * Which run similarity: each design and cut on a labelled corpus (bench/corpora/: runs.jsonl and
 * labels.jsonl), the goals embedded with the test model, clustered in memory (no stack) with
 * average linkage. Against the family labels: homogeneity, completeness, adjusted Rand index, and
 * among clusters of ≥ 3 runs (what could qualify) the share mixing families (no family has 80 %
 * of it) and the recurring families (≥ 3 runs, ≥ 3 steps) that exactly one such cluster holds
 * ("one clean") or more than one ("split"). Runs without a family are each their own label.
 *
 *   node --import tsx bench/cluster-designs.bench.ts --corpus DIR
 *        [--designs goal:0.5,product:0.5,mix:0.7:0.5,gate:0.4:0.8] [--linkage average] [--detail]
 *
 * A design is `goal:τ`, `product:τ`, `mix:τ:w` or `evidence:τ:w` (w = goal weight) or `gate:τ_goal:τ_tool`.
 * --detail lists each recurring family that is not one clean cluster, with the clusters holding its runs.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { clusterRuns, type ClusterLinkage } from '../src/clustering/cluster-goals.ts';
import { parseSimilarityDesign, procedureTableFor, runSimilarity } from '../src/clustering/run-similarity.ts';
import { ProcedureTable, traceOfRun } from '../src/clustering/tool-sequence-similarity.ts';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { requireTestModel, testModelSettings } from '../test/support/test-model.ts';
import { jsonLines, readFamilies } from './corpus-files.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    designs: {
      type: 'string',
      default: 'goal:0.5,goal:0.6,product:0.4,product:0.5,mix:0.6:0.5,mix:0.65:0.5,mix:0.7:0.5,mix:0.75:0.4,gate:0.4:0.7,gate:0.4:0.8',
    },
    linkage: { type: 'string', default: 'average' },
    detail: { type: 'boolean', default: false },
  },
});

const runSchema = z.object({
  runId: z.string(),
  goal: z.string().min(1),
  toolCalls: z.array(z.object({ tool: z.string().min(1), success: z.boolean() })),
});

const choose2 = (count: number) => (count * (count - 1)) / 2;
function entropy(counts: Iterable<number>, total: number): number {
  let sum = 0;
  for (const count of counts) if (count > 0) sum -= (count / total) * Math.log(count / total);
  return sum;
}
function tally<K>(keys: Iterable<K>): Map<K, number> {
  const counts = new Map<K, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

function score(labels: string[], recurring: Set<string>, clusters: number[][]) {
  const n = labels.length;
  const assigned = new Int32Array(n).fill(-1);
  clusters.forEach((cluster, index) => cluster.forEach((run) => (assigned[run] = index)));
  let next = clusters.length;
  for (let run = 0; run < n; run++) if (assigned[run] === -1) assigned[run] = next++;
  const joint = tally(labels.map((label, run) => `${assigned[run]}\u0000${label}`));
  const byCluster = tally(assigned);
  const byLabel = tally(labels);
  let labelGivenCluster = 0;
  let clusterGivenLabel = 0;
  for (const [key, count] of joint) {
    const [cluster, label] = key.split('\u0000');
    labelGivenCluster -= (count / n) * Math.log(count / byCluster.get(Number(cluster))!);
    clusterGivenLabel -= (count / n) * Math.log(count / byLabel.get(label!)!);
  }
  const labelEntropy = entropy(byLabel.values(), n);
  const clusterEntropy = entropy(byCluster.values(), n);
  const homogeneity = labelEntropy === 0 ? 1 : 1 - labelGivenCluster / labelEntropy;
  const completeness = clusterEntropy === 0 ? 1 : 1 - clusterGivenLabel / clusterEntropy;
  const pairs = [...joint.values()].reduce((sum, count) => sum + choose2(count), 0);
  const labelPairs = [...byLabel.values()].reduce((sum, count) => sum + choose2(count), 0);
  const clusterPairs = [...byCluster.values()].reduce((sum, count) => sum + choose2(count), 0);
  const expected = (labelPairs * clusterPairs) / choose2(n);
  const ari = (pairs - expected) / ((labelPairs + clusterPairs) / 2 - expected);
  const candidates = clusters.filter((cluster) => cluster.length >= 3);
  let mixing = 0;
  const owned = new Map<string, number>();
  for (const cluster of candidates) {
    const [top, count] = [...tally(cluster.map((run) => labels[run]!))].sort((a, b) => b[1] - a[1])[0]!;
    if (count / cluster.length >= 0.8) owned.set(top, (owned.get(top) ?? 0) + 1);
    else mixing++;
  }
  const oneClean = [...recurring].filter((family) => owned.get(family) === 1).length;
  const split = [...recurring].filter((family) => (owned.get(family) ?? 0) > 1).length;
  return { homogeneity, completeness, ari, candidates: candidates.length, mixing, oneClean, split };
}

async function main(): Promise<void> {
  if (!values.corpus) throw new Error('--corpus DIR is required (runs.jsonl and labels.jsonl, as bench/corpora/ writes them)');
  await requireTestModel();
  const runs = await jsonLines(join(values.corpus, 'runs.jsonl'), runSchema);
  const familyOf = await readFamilies(values.corpus);
  const labels = runs.map((run) => familyOf.get(run.runId) ?? `(none) ${run.runId}`);
  const traces = runs.map(traceOfRun);
  const familySizes = tally(runs.flatMap((run) => (familyOf.get(run.runId) ? [familyOf.get(run.runId)!] : [])));
  const recurring = new Set(
    [...familySizes]
      .filter(([family, size]) => size >= 3 && runs.some((run, index) => labels[index] === family && traces[index]!.tools.length >= 3))
      .map(([family]) => family),
  );
  const embedder = await createEmbedder(testModelSettings());
  const vectors = await embedder.embed(
    runs.map((run) => run.goal),
    'goal',
  );
  const procedures = new ProcedureTable(traces);
  const weighted = procedureTableFor(traces, 'evidence', 3);
  console.log(
    `# ${values.corpus}: ${runs.length} runs, ${recurring.size} recurring families, ${procedures.distinctCount} distinct procedures, ${embedder.modelId}, ${values.linkage} linkage`,
  );
  console.log(
    '| design | largest component | homogeneity | completeness | ARI | clusters ≥ 3 | mixing families | recurring families: one clean | split |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const design of values.designs.split(',')) {
    const settings = parseSimilarityDesign(design);
    const table = settings.design === 'evidence' ? weighted : procedures;
    const clustering = await clusterRuns(vectors, runSimilarity(vectors, table, settings), {
      linkage: values.linkage as ClusterLinkage,
    });
    const s = score(labels, recurring, clustering.clusters);
    if (values.detail) {
      for (const family of [...recurring].sort()) {
        const parts = clustering.clusters.filter((cluster) => cluster.some((run) => labels[run] === family));
        const inClusters = parts.reduce((sum, cluster) => sum + cluster.filter((run) => labels[run] === family).length, 0);
        const clean = parts.filter(
          (cluster) => cluster.length >= 3 && cluster.filter((run) => labels[run] === family).length / cluster.length >= 0.8,
        );
        if (clean.length !== 1) {
          console.log(
            `  ${family} (${familySizes.get(family)} runs, ${inClusters} clustered): ` +
              parts.map((cluster) => `[${cluster.map((run) => (labels[run] === family ? '·' : labels[run])).join(' ')}]`).join(' '),
          );
        }
      }
    }
    console.log(
      `| ${design} | ${clustering.largestComponentSize} | ${s.homogeneity.toFixed(3)} | ${s.completeness.toFixed(3)} | ${s.ari.toFixed(3)} | ` +
        `${s.candidates} | ${s.mixing} (${((100 * s.mixing) / Math.max(1, s.candidates)).toFixed(0)} %) | ` +
        `${s.oneClean} (${(s.oneClean / Math.max(1, recurring.size)).toFixed(2)}) | ${s.split} |`,
    );
  }
}

await main();
