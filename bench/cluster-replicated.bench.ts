/**
 * Clustering at scale on a real distribution: the runs of a corpus file (e.g. NESTFUL from
 * bench/corpora/nestful.ts) replicated to N runs with paraphrase noise — each replica's goal
 * vector is its source's, turned by Gaussian noise to a chosen mean cosine with it; each replica's
 * procedure may gain an optional step (a tool of the corpus) or stop part-way as a failed run.
 * Wall time of the clustering call and the child's peak RSS (`/usr/bin/time -v`), per design.
 *
 *   node --import tsx bench/cluster-replicated.bench.ts --runs RUNS.jsonl [--sizes 10000,100000]
 *        [--designs goal:0.5,product:0.5,mix:0.75:0.4,gate:0.5:0.85] [--linkage average]
 *        [--goal-noise 0.9] [--optional-rate 0.2] [--failure-rate 0.1] [--seed 3] [--dense-limit 4000]
 *
 * A design is `goal:τ`, `product:τ`, `mix:τ:w` (w = goal weight) or `gate:τ_goal:τ_tool`.
 * The corpus goals are embedded once with the test model (node bin/skillsmith.js models pull).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { clusterRuns, defaultDenseComponentLimit, type ClusterLinkage } from '../src/clustering/cluster-goals.ts';
import { parseSimilarityDesign, runSimilarity } from '../src/clustering/run-similarity.ts';
import { ProcedureTable, traceOfRun, type ProcedureTrace } from '../src/clustering/tool-sequence-similarity.ts';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { createSeededRandom } from '../src/clustering/seeded-random.ts';
import { noisyNeighbour } from '../test/support/synthetic-vectors.ts';
import { requireTestModel, testModelSettings } from '../test/support/test-model.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    sizes: { type: 'string', default: '10000,100000' },
    designs: { type: 'string', default: 'goal:0.5,product:0.5,mix:0.75:0.4,gate:0.5:0.85' },
    linkage: { type: 'string', default: 'average' },
    'goal-noise': { type: 'string', default: '0.9' },
    'optional-rate': { type: 'string', default: '0.2' },
    'failure-rate': { type: 'string', default: '0.1' },
    seed: { type: 'string', default: '3' },
    'dense-limit': { type: 'string', default: String(defaultDenseComponentLimit) },
    child: { type: 'string' },
    corpus: { type: 'string' },
    n: { type: 'string' },
  },
});

/** What the bench reads of a run report: the goal, the status, the tools and whether each call succeeded. */
const corpusRunSchema = z.object({
  goal: z.string().min(1),
  status: z.enum(['completed', 'failed', 'cancelled']),
  toolCalls: z.array(z.object({ tool: z.string().min(1), success: z.boolean() })),
});

interface Corpus {
  dimension: number;
  /** Unit goal vectors of the corpus runs, concatenated. */
  vectors: number[];
  traces: ProcedureTrace[];
}

function replicate(corpus: Corpus, n: number) {
  const random = createSeededRandom(Number(values.seed));
  const goalNoise = Number(values['goal-noise']);
  const optionalRate = Number(values['optional-rate']);
  const failureRate = Number(values['failure-rate']);
  const tools = [...new Set(corpus.traces.flatMap((trace) => trace.tools))];
  const count = corpus.traces.length;
  const vectors: Float32Array[] = [];
  const traces: ProcedureTrace[] = [];
  for (let index = 0; index < n; index++) {
    const source = index % count;
    const sourceVector = Float32Array.from(corpus.vectors.slice(source * corpus.dimension, (source + 1) * corpus.dimension));
    vectors.push(index < count ? sourceVector : noisyNeighbour(random, sourceVector, goalNoise));
    const sequence = [...corpus.traces[source]!.tools];
    if (index >= count && random.chance(optionalRate)) sequence.splice(random.integer(0, sequence.length), 0, random.pick(tools));
    const fails = index >= count && random.chance(failureRate);
    traces.push({ tools: fails ? sequence.slice(0, random.integer(0, sequence.length)) : sequence });
  }
  return { vectors, traces };
}

async function runChild(corpusFile: string, n: number, design: string): Promise<void> {
  const corpus = JSON.parse(await readFile(corpusFile, 'utf8')) as Corpus;
  const { vectors, traces } = replicate(corpus, n);
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const procedures = new ProcedureTable(traces);
  const similarity = runSimilarity(vectors, procedures, parseSimilarityDesign(design));
  const clustering = await clusterRuns(vectors, similarity, {
    linkage: values.linkage as ClusterLinkage,
    denseComponentLimit: Number(values['dense-limit']),
  });
  const cpu = process.cpuUsage(cpuStarted);
  process.stdout.write(
    `${JSON.stringify({
      seconds: (performance.now() - started) / 1000,
      // The clustering's own CPU (all threads: onnxruntime's GEMM included), without loading and replicating the corpus.
      clusteringCpuSeconds: (cpu.user + cpu.system) / 1e6,
      clusters: clustering.clusters.length,
      components: clustering.componentCount,
      largestComponent: clustering.largestComponentSize,
      comparedPairs: clustering.comparedPairs,
      edges: clustering.edgeCount,
      thresholdGraphSeconds: clustering.seconds.thresholdGraph,
      linkageSeconds: clustering.seconds.linkage,
      sparseComponents: clustering.sparseComponentCount,
      distinctProcedures: procedures.distinctCount,
      // The canonical partition (clusters ascending, ordered by first member): equal digests, equal partitions.
      partition: createHash('sha256').update(JSON.stringify(clustering.clusters)).digest('hex').slice(0, 16),
    })}\n`,
  );
}

function measure(corpusFile: string, n: number, design: string) {
  const script = fileURLToPath(import.meta.url);
  const passThrough = ['linkage', 'goal-noise', 'optional-rate', 'failure-rate', 'seed', 'dense-limit'].flatMap((name) => [
    `--${name}`,
    String(values[name as keyof typeof values]),
  ]);
  const child = spawn(
    '/usr/bin/time',
    ['-v', process.execPath, '--import', 'tsx', script, '--child', design, '--corpus', corpusFile, '--n', String(n), ...passThrough],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ peakRssMiB: number; cpuSeconds: number; failure?: string; [figure: string]: number | string | undefined }>(
    (resolve) => {
      child.on('close', (code) => {
        const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
        const line = stdout.trim().split('\n').at(-1);
        const peakRssMiB = rss ? Number(rss[1]) / 1024 : NaN;
        // The whole child's CPU (corpus loading included): on a shared machine wall time waits for cores.
        const cpuSeconds = ['User', 'System']
          .map((kind) => Number(new RegExp(`${kind} time \\(seconds\\): ([\\d.]+)`).exec(stderr)?.[1] ?? NaN))
          .reduce((sum, value) => sum + value, 0);
        if (code !== 0 || !line) {
          const reason = /(RangeError[^\n]*|heap out of memory)/.exec(stderr)?.[0] ?? `exit ${code}`;
          resolve({ peakRssMiB, cpuSeconds, failure: reason.slice(0, 160) });
          return;
        }
        resolve({ ...(JSON.parse(line) as Record<string, number>), peakRssMiB, cpuSeconds });
      });
    },
  );
}

async function embedCorpus(runsFile: string): Promise<string> {
  await requireTestModel();
  const reports = (await readFile(runsFile, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => corpusRunSchema.parse(JSON.parse(line)));
  const embedder = await createEmbedder(testModelSettings());
  const goalVectors = await embedder.embed(
    reports.map((report) => report.goal),
    'goal',
  );
  const corpus: Corpus = {
    dimension: embedder.dimension,
    vectors: goalVectors.flatMap((vector) => [...vector]),
    traces: reports.map(traceOfRun),
  };
  const file = join(tmpdir(), `skillsmith-cluster-corpus-${process.pid}.json`);
  await writeFile(file, JSON.stringify(corpus));
  return file;
}

async function main(): Promise<void> {
  if (values.child) {
    await runChild(values.corpus!, Number(values.n), values.child);
    return;
  }
  if (!values.runs) throw new Error('--runs RUNS.jsonl is required (e.g. the NESTFUL corpus from bench/corpora/nestful.ts)');
  const corpusFile = await embedCorpus(values.runs);
  console.log(
    `# ${values.runs} replicated with paraphrase noise (goal cosine ≈ ${values['goal-noise']} to the source, ` +
      `optional step ${values['optional-rate']}, failed part-way ${values['failure-rate']}), ${values.linkage} linkage, ` +
      `${availableParallelism()} cores, node ${process.version}`,
  );
  console.log(
    '| design | n | time (wall) | child CPU | clustering CPU | peak RSS | clusters (≥ 2) | components | largest component | distinct procedures | partition digest |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const n of values.sizes.split(',').map(Number)) {
    for (const design of values.designs.split(',')) {
      const result = await measure(corpusFile, n, design);
      console.log(
        result.failure
          ? `| ${design} | ${n.toLocaleString('en')} | failed: ${result.failure} | ${result.cpuSeconds.toFixed(1)} s | – | ${result.peakRssMiB.toFixed(0)} MiB | – | – | – | – | – |`
          : `| ${design} | ${n.toLocaleString('en')} | ${Number(result.seconds).toFixed(1)} s | ${result.cpuSeconds.toFixed(1)} s | ` +
              `${Number(result.clusteringCpuSeconds).toFixed(1)} s | ${result.peakRssMiB.toFixed(0)} MiB | ` +
              ['clusters', 'components', 'largestComponent', 'distinctProcedures']
                .map((figure) => Number(result[figure]).toLocaleString('en'))
                .join(' | ') +
              ` | ${String(result.partition)} |`,
      );
    }
  }
}

await main();
