import { createEmbedder, type Embedder } from '../src/embedding/embedder.ts';
import { packagedModels, testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { ensureRecallIndex } from '../src/procedures/procedure-goal-vector-repository.ts';
import { insertProcedure } from '../src/procedures/procedure-repository.ts';
import { createSeededRandom } from '../src/clustering/seeded-random.ts';
import { serializeSkillDocument } from '../src/skills/skill-format.ts';
import { withTransaction } from '../src/store/database.ts';
import { createSkillRepository, type SkillRepository } from '../src/store/skill-repository.ts';
import { type SkillRevision } from '../src/skills/skill-revision.ts';
import { openFreshDatabase, type TestDatabase } from '../test/support/database.ts';

/**
 * Shared set-up for the recall and API benchmarks: a database (embedded PGlite, or a fresh
 * database on the native server named by --database-url), N real installed skills, one
 * procedure per skill with a seeded random unit embedding, and the registry-shipped embedder.
 */
export const BENCH_TENANT = 'bench';

export interface BenchDatabase extends TestDatabase {
  kind: 'embedded' | 'native';
}

export async function openBenchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  return { ...(await openFreshDatabase(serverUrl)), kind: serverUrl ? 'native' : 'embedded' };
}

export function benchSkillName(index: number): string {
  return `bench-skill-${String(index).padStart(6, '0')}`;
}

function skillFiles(name: string, index: number): Map<string, Uint8Array> {
  const text = serializeSkillDocument(
    {
      name,
      version: '1.0.0',
      description: `Handle recurring task number ${index}: gather inputs, run the steps, verify the result.`,
      requiredTools: ['workspace.read_text', 'sandbox.run_command'],
      license: 'Apache-2.0',
    },
    `# Task ${index}\n\n1. Read the inputs.\n2. Run the command.\n3. Verify the output of task ${index}.`,
  );
  return new Map([['SKILL.md', new TextEncoder().encode(text)]]);
}

function randomUnitVector(random: ReturnType<typeof createSeededRandom>, dimension: number): Float32Array {
  const values = Float32Array.from(
    { length: dimension },
    () => Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next()),
  );
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

/** Where the benches find the registry-shipped models unless told (`--model-dir`). */
export const benchModelDir = new URL('../.skillsmith/models', import.meta.url).pathname;

/** The registry-shipped embedder (the test model unless another packaged model is named). */
export async function loadEmbedder(modelId: string = testEmbeddingModel.modelId, modelDir: string = benchModelDir): Promise<Embedder> {
  const model = packagedModels.get(modelId);
  if (!model) throw new Error(`${modelId} is not a registry-shipped model (${[...packagedModels.keys()].join(', ')})`);
  return createEmbedder({
    model: model.modelId,
    modelDir,
    allowRemoteModels: false,
    pooling: model.pooling,
    prefixes: model.prefixes,
    dimension: undefined,
    batchSize: 32,
  });
}

export interface Populated {
  skills: SkillRepository;
  installSeconds: number;
  insertSeconds: number;
  indexSeconds: number;
}

/** Installs `count` real skills and one procedure each; builds the HNSW index. */
export async function populate(
  database: BenchDatabase,
  count: number,
  options: { dimension: number; modelId: string; seed?: number; concurrency?: number },
): Promise<Populated> {
  const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'Apache-2.0' });
  const random = createSeededRandom(options.seed ?? 7);
  const revisions: SkillRevision[] = new Array(count);
  let started = performance.now();
  let next = 0;
  const concurrency = database.kind === 'embedded' ? 1 : (options.concurrency ?? 6);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        const name = benchSkillName(index);
        revisions[index] = await skills.install(
          BENCH_TENANT,
          { directoryName: name, files: skillFiles(name, index) },
          { source: 'operator' },
        );
        if (index > 0 && index % 5000 === 0) process.stderr.write(`  installed ${index} skills\n`);
      }
    }),
  );
  const installSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  for (let start = 0; start < count; start += 1000) {
    await withTransaction(database.pool, async (client) => {
      for (const revision of revisions.slice(start, start + 1000)) {
        await insertProcedure(client, BENCH_TENANT, {
          skillId: revision.skillId,
          name: revision.name,
          revision: revision.revision,
          whenToUse: `when recurring task ${revision.name} comes up`,
          toolSequence: [{ tool: 'sandbox.run_command', argumentNames: ['command'] }],
          toolsRequired: ['sandbox.run_command'],
          successCount: 3,
          attemptCount: 3,
          fromSessions: [],
          embedding: randomUnitVector(random, options.dimension),
          embeddingModel: options.modelId,
        });
      }
    });
  }
  const insertSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  await ensureRecallIndex(database.pool, options.dimension);
  await database.pool.query('ANALYZE procedures');
  await database.pool.query('ANALYZE procedure_goal_vectors');
  const indexSeconds = (performance.now() - started) / 1000;
  return { skills, installSeconds, insertSeconds, indexSeconds };
}

export function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

export function summarize(samples: readonly number[]): { p50: number; p99: number; mean: number; n: number } {
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return { p50: round(percentile(samples, 0.5)), p99: round(percentile(samples, 0.99)), mean: round(mean), n: samples.length };
}
