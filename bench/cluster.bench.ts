/**
 * Clustering benchmark: wall time and peak RSS of our clustering (τ-components, then ml-hclust
 * per component) on structured goal-like unit vectors, against ml-hclust on the whole set where
 * it can finish, and whether the two partitions are identical.
 *
 *   node --import tsx bench/cluster.bench.ts [--sizes 1000,4000,10000,100000] [--dimension 384]
 *        [--hclust-max 4000] [--linkage average] [--tau 0.82]
 *
 * Each (size, method) runs in its own child process under `/usr/bin/time -v`, so the peak RSS
 * is that run's alone; the time is measured inside the child around the clustering call
 * (data generation excluded, its memory included in the RSS).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { clusterVectors, type ClusterLinkage } from '../src/clustering/cluster-goals.ts';
import { goalSimilarity } from '../src/clustering/run-similarity.ts';
import { wholeSetPartition } from '../test/support/reference-clustering.ts';
import { structuredUnitVectors } from '../test/support/synthetic-vectors.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,4000,10000,100000' },
    dimension: { type: 'string', default: '384' },
    'hclust-max': { type: 'string', default: '4000' },
    linkage: { type: 'string', default: 'average' },
    tau: { type: 'string', default: '0.82' },
    child: { type: 'string' },
    n: { type: 'string' },
  },
});

const dimension = Number(values.dimension);
const linkage = values.linkage as ClusterLinkage;
const similarityTau = Number(values.tau);

function partitionDigest(count: number, clusters: number[][]): string {
  const covered = new Set(clusters.flat());
  const parts = [...clusters.map((part) => [...part].sort((a, b) => a - b))];
  for (let index = 0; index < count; index++) if (!covered.has(index)) parts.push([index]);
  parts.sort((a, b) => a[0]! - b[0]!);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

interface ChildResult {
  method: string;
  n: number;
  seconds: number;
  clusters: number;
  digest: string;
  detail?: Record<string, number>;
}

async function runChild(method: string, n: number): Promise<void> {
  const { vectors } = structuredUnitVectors(n, dimension, 1);
  const started = performance.now();
  let result: ChildResult;
  if (method === 'ours') {
    const clustering = await clusterVectors(vectors, { similarityTau, linkage });
    result = {
      method,
      n,
      seconds: (performance.now() - started) / 1000,
      clusters: clustering.clusters.length,
      digest: partitionDigest(n, clustering.clusters),
      detail: {
        components: clustering.componentCount,
        largestComponent: clustering.largestComponentSize,
        comparedPairs: clustering.comparedPairs,
      },
    };
  } else {
    const parts = wholeSetPartition(vectors.length, goalSimilarity(vectors, similarityTau), linkage);
    const clusters = parts.filter((part) => part.length > 1);
    result = {
      method,
      n,
      seconds: (performance.now() - started) / 1000,
      clusters: clusters.length,
      digest: partitionDigest(n, clusters),
    };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function measure(method: string, n: number): Promise<ChildResult & { peakRssMiB: number }> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(
    '/usr/bin/time',
    [
      '-v',
      process.execPath,
      '--import',
      'tsx',
      script,
      '--child',
      method,
      '--n',
      String(n),
      '--dimension',
      String(dimension),
      '--linkage',
      linkage,
      '--tau',
      String(similarityTau),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const line = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !rss || !line) {
        reject(new Error(`${method} n=${n} failed (exit ${code}): ${stderr.slice(-2000)}`));
        return;
      }
      resolve({ ...(JSON.parse(line) as ChildResult), peakRssMiB: Number(rss[1]) / 1024 });
    });
  });
}

async function main(): Promise<void> {
  if (values.child) {
    await runChild(values.child, Number(values.n));
    return;
  }
  const sizes = values.sizes.split(',').map(Number);
  const hclustMax = Number(values['hclust-max']);
  console.log(
    `# clustering: structured ${dimension}-d unit vectors, ${linkage} linkage, τ=${similarityTau}, ` +
      `${availableParallelism()} cores, node ${process.version}`,
  );
  console.log('| n | ours: time | ours: peak RSS | ml-hclust whole set: time | ml-hclust: peak RSS | clusters | identical partition |');
  console.log('|---|---|---|---|---|---|---|');
  for (const n of sizes) {
    const ours = await measure('ours', n);
    let whole: (ChildResult & { peakRssMiB: number }) | undefined;
    if (n <= hclustMax) whole = await measure('hclust', n);
    console.log(
      `| ${n.toLocaleString('en')} | ${ours.seconds.toFixed(2)} s | ${ours.peakRssMiB.toFixed(0)} MiB | ` +
        (whole ? `${whole.seconds.toFixed(1)} s | ${whole.peakRssMiB.toFixed(0)} MiB | ` : 'not run | – | ') +
        `${ours.clusters} | ${whole ? (whole.digest === ours.digest ? 'yes' : `NO (${whole.digest} vs ${ours.digest})`) : '–'} |`,
    );
    console.error(`  n=${n} ours: ${JSON.stringify(ours.detail)}`);
  }
}

await main();
