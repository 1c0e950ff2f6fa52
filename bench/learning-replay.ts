/**
 * What `skillsmith eval` learns, replayed in memory: the same clustering, qualification,
 * consensus and reconcile functions the synthesis pass runs, over a labelled corpus
 * (bench/corpora/: runs.jsonl, labels.jsonl), without Temporal, Postgres or a distiller. Full
 * passes until one adds, updates and supersedes nothing, each pass settling its NOOPs first and
 * then processing at most maxClustersPerPass qualifying clusters by value, as
 * workflows/synthesis-pass.ts does; installs keep the track record and provenance as
 * countProcedureRuns does. Prints the eval's learning figures (family recall, live skills mixing
 * families, families with more than one live skill) and, with --explain, each mixing skill and
 * each family held by several skills. Recall is not replayed (it needs the store).
 *
 *   node --import tsx bench/learning-replay.ts --corpus DIR [--max-passes 20] [--explain] [--embeddings-cache FILE]
 *
 * Settings are read like every command (SKILLSMITH_* environment, defaults otherwise); the goals
 * are embedded with the test model (all-MiniLM-L6-v2, no prefixes) and cached by goal text.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { clusterIdOf } from '../src/clustering/cluster-pass.ts';
import { clusterRuns } from '../src/clustering/cluster-goals.ts';
import { splitClustersByGoalDeterminedVariants } from '../src/clustering/goal-determined-variants.ts';
import { assessClusters, clusterValue, isSuccessfulSequence, type ClusterRun } from '../src/clustering/qualification.ts';
import { runSimilarity } from '../src/clustering/run-similarity.ts';
import { ProcedureTable } from '../src/clustering/tool-sequence-similarity.ts';
import { loadConfig } from '../src/app/config.ts';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { goalTextHash, normaliseGoalText } from '../src/embedding/goal-text.ts';
import { recurringFamilies, scoreSkills, type FamilyLabel } from '../src/eval/scoring.ts';
import type { ConsensusStep, Procedure } from '../src/procedures/procedure.ts';
import { buildClusterEvidence, type EvidenceRun } from '../src/synthesis/cluster-evidence.ts';
import {
  decide,
  matchProcedure,
  observedOptionalTools,
  reconcileThresholds,
  settleAlreadyLearned,
  type ReconcileDecision,
} from '../src/synthesis/reconcile.ts';
import { requireTestModel, testModelSettings } from '../test/support/test-model.ts';
import { jsonLines, readFamilies } from './corpus-files.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    'max-passes': { type: 'string', default: '20' },
    explain: { type: 'boolean', default: false },
    'embeddings-cache': { type: 'string' },
    /** Leave clusters whole (the clustering before goal-determined variants were split), to compare. */
    'no-variant-split': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    /** Write the live procedures (tools, counted successful runs) as JSON, for bench/recall-acceptance.ts. */
    'procedures-out': { type: 'string' },
  },
});

const runSchema = z.object({
  runId: z.string(),
  goal: z.string().min(1),
  status: z.enum(['completed', 'failed', 'cancelled']),
  toolCalls: z.array(
    z.object({
      tool: z.string().min(1),
      success: z.boolean(),
      args: z.record(z.string(), z.unknown()).optional(),
      resultSummary: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
});

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function embedGoals(goals: string[], cacheFile: string): Promise<Float32Array[]> {
  const cache = new Map<string, Float32Array>();
  if (existsSync(cacheFile)) {
    const stored = JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, number[]>;
    for (const [hash, vector] of Object.entries(stored)) cache.set(hash, Float32Array.from(vector));
  }
  const texts = goals.map(normaliseGoalText);
  const missing = [...new Set(texts.filter((text) => !cache.has(goalTextHash(text))))];
  if (missing.length > 0) {
    await requireTestModel();
    const embedder = await createEmbedder(testModelSettings());
    const vectors = await embedder.embed(missing, 'goal', {
      onProgress: (done, total) => process.stderr.write(`\rembedding ${done}/${total}`),
    });
    process.stderr.write('\n');
    missing.forEach((text, index) => cache.set(goalTextHash(text), vectors[index]!));
    await writeFile(cacheFile, JSON.stringify(Object.fromEntries([...cache].map(([hash, vector]) => [hash, [...vector]]))));
  }
  return texts.map((text) => cache.get(goalTextHash(text))!);
}

interface ReplayProcedure {
  procedure: Procedure;
  /** The clusters installed into it (ADD, UPDATE), for --explain. */
  clusterKeys: string[];
  /** Run id → success, every run the record counts. */
  counted: Map<string, boolean>;
  centroid: Float32Array | null;
}

function meanVector(vectors: Float32Array[]): Float32Array | null {
  if (vectors.length === 0) return null;
  const mean = new Float32Array(vectors[0]!.length);
  for (const vector of vectors) for (let index = 0; index < mean.length; index++) mean[index]! += vector[index]! / vectors.length;
  return mean;
}

async function main(): Promise<void> {
  if (!values.corpus) throw new Error('--corpus DIR is required (runs.jsonl and labels.jsonl, as bench/corpora/ writes them)');
  const config = loadConfig({
    ...process.env,
    SKILLSMITH_EMBEDDING_MODEL: testModelSettings().model,
    SKILLSMITH_EMBEDDING_PREFIXES: 'none',
  });
  const { synthesis } = config;
  const runs = (await jsonLines(join(values.corpus, 'runs.jsonl'), runSchema)).sort((a, b) => compareText(a.runId, b.runId));
  const familyOf: ReadonlyMap<string, FamilyLabel> = await readFamilies(values.corpus);
  const family = (runId: string): FamilyLabel => familyOf.get(runId) ?? null;
  const vectors = await embedGoals(
    runs.map((run) => run.goal),
    values['embeddings-cache'] ?? join(values.corpus, 'minilm-goal-embeddings.json'),
  );
  const vectorOf = new Map(runs.map((run, index) => [run.runId, vectors[index]!]));
  const runById = new Map(runs.map((run) => [run.runId, run]));
  const indexOf = new Map(runs.map((run, index) => [run.runId, index]));

  // CLUSTER + qualify: one clustering for every full pass (the same runs cluster the same way).
  const started = Date.now();
  const successfulTools = runs.map((run) => run.toolCalls.filter((call) => call.success).map((call) => call.tool));
  const procedures = new ProcedureTable(successfulTools.map((tools) => ({ tools })));
  const similarity = runSimilarity(vectors, procedures, {
    design: synthesis.clusterSimilarity,
    goalTau: synthesis.similarityTau,
    clusterTau: synthesis.clusterTau,
    toolTau: synthesis.clusterToolTau,
    goalWeight: synthesis.clusterGoalWeight,
  });
  const clustering = await clusterRuns(vectors, similarity, {
    linkage: synthesis.linkage,
    denseComponentLimit: synthesis.clusterDenseComponentLimit,
  });
  const cut = values['no-variant-split']
    ? clustering.clusters
    : splitClustersByGoalDeterminedVariants(
        clustering.clusters,
        {
          vectors,
          traceOf: (run) => procedures.traceOfRun[run]!,
          successful: (run) => runs[run]!.status === 'completed' && successfulTools[run]!.length >= synthesis.minSteps,
          distance: similarity.distance,
          wording: {
            goal: (run) => runs[run]!.goal,
            calls: (run) =>
              runs[run]!.toolCalls.filter((call) => call.success).map((call) => ({
                tool: call.tool,
                argumentNames: Object.keys(call.args ?? {}),
              })),
          },
        },
        synthesis.minOccurrences,
      );
  const members: ClusterRun[][] = cut.map((cluster) =>
    cluster.map((index) => ({
      runId: runs[index]!.runId,
      status: runs[index]!.status,
      successfulToolCalls: successfulTools[index]!.length,
      successfulTools: successfulTools[index]!,
    })),
  );
  const assessments = assessClusters(members, synthesis);
  const clusters = assessments
    .filter((assessment) => assessment.qualifies)
    .map((assessment) => {
      const clusterRunsOf = members[assessment.clusterIndex]!;
      const runIds = clusterRunsOf.map((run) => run.runId);
      return {
        key: clusterIdOf(runIds),
        value: clusterValue(assessment),
        rank: assessment.rank!,
        runIds,
        successfulRunIds: clusterRunsOf.filter((run) => isSuccessfulSequence(run, synthesis.minSteps)).map((run) => run.runId),
        failedRunIds: clusterRunsOf.filter((run) => run.status !== 'completed').map((run) => run.runId),
      };
    });
  const clusteringMs = Date.now() - started;
  const consensusCache = new Map<string, ConsensusStep[]>();
  const consensusOf = (cluster: (typeof clusters)[number]): ConsensusStep[] => {
    let sequence = consensusCache.get(cluster.key);
    if (!sequence) {
      const evidenceRuns: EvidenceRun[] = cluster.runIds.map((runId) => runById.get(runId)!);
      sequence = buildClusterEvidence(evidenceRuns, synthesis.minSteps).consensusSequence;
      consensusCache.set(cluster.key, sequence);
    }
    return sequence;
  };

  const thresholds = reconcileThresholds(synthesis);
  const store: ReplayProcedure[] = [];
  let nextId = 1;
  const decideCluster = (cluster: (typeof clusters)[number]): { decision: ReconcileDecision; sequence: ConsensusStep[] } => {
    const sequence = consensusOf(cluster);
    const successful = new Set(cluster.successfulRunIds);
    const counted = [
      ...cluster.successfulRunIds.map((runId) => ({ runId, success: true })),
      ...cluster.failedRunIds.map((runId) => ({ runId, success: false })),
    ];
    const profile = {
      tools: sequence.map((step) => step.tool),
      optionalTools: observedOptionalTools(
        cluster.runIds.filter((runId) => successful.has(runId)).map((runId) => successfulTools[indexOf.get(runId)!]!),
      ),
      goalCentroid: meanVector(cluster.successfulRunIds.map((runId) => vectorOf.get(runId)!)),
      successCount: cluster.successfulRunIds.length,
      attemptCount: counted.length,
    };
    const match = matchProcedure(
      profile,
      store.map((entry) => ({
        procedure: entry.procedure,
        goalCentroid: entry.centroid,
        optionalTools: observedOptionalTools(
          [...entry.counted].filter(([, success]) => success).map(([runId]) => successfulTools[indexOf.get(runId)!]!),
        ),
      })),
      thresholds,
    );
    const targetEntry = match ? store.find((entry) => entry.procedure.id === match.target.id)! : undefined;
    const fresh = targetEntry ? counted.filter((run) => !targetEntry.counted.has(run.runId)) : counted;
    const learners = new Map<string, Procedure[]>();
    for (const runId of cluster.successfulRunIds) {
      const holding = store.filter((entry) => entry.procedure.supersededBy === null && entry.counted.get(runId) === true);
      if (holding.length > 0)
        learners.set(
          runId,
          holding.map((entry) => entry.procedure),
        );
    }
    return {
      decision: settleAlreadyLearned(decide(profile, match, fresh.length), cluster.successfulRunIds, learners, synthesis.minOccurrences),
      sequence,
    };
  };
  const countRuns = (entry: ReplayProcedure, cluster: (typeof clusters)[number]) => {
    entry.clusterKeys.push(cluster.key);
    const counted = [
      ...cluster.successfulRunIds.map((runId) => ({ runId, success: true })),
      ...cluster.failedRunIds.map((runId) => ({ runId, success: false })),
    ];
    for (const run of counted) {
      if (entry.counted.has(run.runId)) continue;
      entry.counted.set(run.runId, run.success);
      if (run.success) entry.procedure.successCount += 1;
      entry.procedure.attemptCount += 1;
    }
    entry.centroid = meanVector([...entry.counted].filter(([, success]) => success).map(([runId]) => vectorOf.get(runId)!));
  };
  const newProcedure = (sequence: ConsensusStep[]): ReplayProcedure => {
    const id = `p${String(nextId++).padStart(3, '0')}`;
    const procedure = {
      id,
      name: id,
      revision: 1,
      toolSequence: sequence,
      successCount: 0,
      attemptCount: 0,
      supersededBy: null,
    } as unknown as Procedure;
    const entry = { procedure, clusterKeys: [] as string[], counted: new Map<string, boolean>(), centroid: null };
    store.push(entry);
    return entry;
  };

  const passLog: string[] = [];
  let converged = false;
  const maxPasses = Number(values['max-passes']);
  for (let pass = 1; pass <= maxPasses; pass++) {
    const decided = new Map<string, ReconcileDecision>();
    for (const cluster of clusters) {
      const { decision } = decideCluster(cluster);
      if (decision.action === 'noop') decided.set(cluster.key, decision);
    }
    const pending = clusters
      .filter((cluster) => !decided.has(cluster.key))
      .sort((a, b) => b.value - a.value || a.rank - b.rank || compareText(a.key, b.key))
      .slice(0, synthesis.maxClustersPerPass);
    const counts = { added: 0, updated: 0, superseded: 0, noop: decided.size };
    for (const cluster of pending) {
      const { decision, sequence } = decideCluster(cluster);
      if (decision.action === 'noop') {
        counts.noop += 1;
        continue;
      }
      if (decision.action === 'update') {
        const entry = store.find((candidate) => candidate.procedure.id === decision.target.id)!;
        entry.procedure.toolSequence = sequence;
        entry.procedure.revision += 1;
        countRuns(entry, cluster);
        counts.updated += 1;
      } else {
        const entry = newProcedure(sequence);
        countRuns(entry, cluster);
        if (decision.action === 'supersede') {
          (decision.weaker as { supersededBy: string | null }).supersededBy = entry.procedure.id;
          counts.superseded += 1;
        } else counts.added += 1;
      }
    }
    passLog.push(`pass ${pass}: ${counts.added} added, ${counts.updated} updated, ${counts.superseded} superseded, ${counts.noop} noop`);
    if (counts.added + counts.updated + counts.superseded === 0) {
      converged = true;
      break;
    }
  }

  const labelled = runs.map((run, index) => ({
    runId: run.runId,
    family: family(run.runId),
    status: run.status,
    successfulSteps: successfulTools[index]!.length,
  }));
  const recurring = recurringFamilies(labelled);
  const live = store.filter((entry) => entry.procedure.supersededBy === null);
  const scores = scoreSkills(
    live.map((entry) => ({
      name: entry.procedure.name,
      runIds: [...entry.counted].filter(([, success]) => success).map(([runId]) => runId),
    })),
    family,
    recurring,
  );
  const summary = {
    corpus: values.corpus,
    settings: {
      clusterSimilarity: synthesis.clusterSimilarity,
      clusterTau: synthesis.clusterTau,
      goalWeight: synthesis.clusterGoalWeight,
      similarityTau: synthesis.similarityTau,
      linkage: synthesis.linkage,
      maxClustersPerPass: synthesis.maxClustersPerPass,
    },
    clusters: cut.filter((cluster) => cluster.length >= 2).length,
    qualifying: clusters.length,
    passes: passLog.length,
    converged,
    live: live.length,
    recurring: recurring.size,
    familyRecall: scores.recalledFamilies.length,
    familyRecallRate: scores.recalledFamilies.length / Math.max(1, recurring.size),
    mixing: scores.mixingSkills.length,
    mixingRate: scores.mixingSkills.length / Math.max(1, live.length),
    familiesWithSeveralSkills: scores.familiesWithSeveralSkills.size,
    clusteringMs,
  };
  if (values['procedures-out'])
    await writeFile(
      values['procedures-out'],
      JSON.stringify(
        live.map((entry) => ({
          id: entry.procedure.id,
          tools: entry.procedure.toolSequence.map((step) => step.tool),
          runIds: [...entry.counted].filter(([, success]) => success).map(([runId]) => runId),
        })),
      ),
    );
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  process.stdout.write(`${passLog.join('\n')}\n`);
  process.stdout.write(
    `clusters ≥ 2: ${summary.clusters}, qualifying: ${summary.qualifying}, passes: ${summary.passes} (converged: ${converged})\n` +
      `live skills: ${summary.live}\n` +
      `family recall: ${summary.familyRecall} / ${summary.recurring} = ${summary.familyRecallRate.toFixed(3)}\n` +
      `live skills mixing families: ${summary.mixing} (${(100 * summary.mixingRate).toFixed(1)} %)\n` +
      `families with > 1 live skill: ${summary.familiesWithSeveralSkills}\n`,
  );
  if (!values.explain) return;
  const describe = (entry: ReplayProcedure) => {
    const byFamily = new Map<string, number>();
    for (const [runId, success] of entry.counted) {
      if (!success) continue;
      const label = family(runId) ?? '(none)';
      byFamily.set(label, (byFamily.get(label) ?? 0) + 1);
    }
    const parts = [...byFamily].sort((a, b) => b[1] - a[1]).map(([label, count]) => `${count}× ${label}`);
    return `${entry.procedure.name} [${entry.procedure.toolSequence.map((step) => step.tool).join(' → ')}]: ${parts.join('; ')}`;
  };
  /** The skill and, for each cluster installed into it, the exact sequences its successful runs followed. */
  const explain = (entry: ReplayProcedure, indent: string) => {
    process.stdout.write(`${indent}${describe(entry)}\n`);
    for (const key of entry.clusterKeys) {
      const cluster = clusters.find((candidate) => candidate.key === key)!;
      const sequences = new Map<string, number>();
      for (const runId of cluster.successfulRunIds) {
        const sequence = successfulTools[indexOf.get(runId)!]!.join(' > ');
        sequences.set(sequence, (sequences.get(sequence) ?? 0) + 1);
      }
      const shown = [...sequences].sort((a, b) => b[1] - a[1]).map(([sequence, count]) => `${count}× ${sequence}`);
      process.stdout.write(`${indent}  cluster ${key} (${cluster.successfulRunIds.length} successful): ${shown.join(' | ')}\n`);
    }
  };
  const byName = (name: string) => live.find((entry) => entry.procedure.name === name)!;
  process.stdout.write('\nmixing skills:\n');
  for (const mixing of scores.mixingSkills) explain(byName(mixing.name), '  ');
  process.stdout.write('\nfamilies with several live skills:\n');
  for (const [label, names] of scores.familiesWithSeveralSkills) {
    process.stdout.write(`  ${label}\n`);
    for (const name of names) explain(byName(name), '    ');
  }
  process.stdout.write('\nmissed families:\n');
  for (const missed of scores.missedFamilies) process.stdout.write(`  ${missed} (${scores.owners.get(missed)?.length ?? 0} owners)\n`);
}

await main();
