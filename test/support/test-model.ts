import { resolve } from 'node:path';
import { loadConfig } from '../../src/app/config.ts';
import type { EmbeddingSettings } from '../../src/embedding/embedder.ts';
import { isModelPresent, testEmbeddingModel } from '../../src/embedding/model-pull.ts';

/**
 * Where `npm test`'s `skillsmith models pull` put the registry-shipped test model: the CLI's own
 * resolution (SKILLSMITH_MODEL_DIR, else $SKILLSMITH_HOME/models, else .skillsmith/models), from
 * the directory vitest and `npm test` run in, so a suite under SKILLSMITH_HOME finds it.
 */
export function testModelDirFor(env: NodeJS.ProcessEnv): string {
  return resolve(loadConfig(env).embedding.modelDir);
}

export const testModelDir = testModelDirFor(process.env);

/** Where `npm test`'s `models pull` installed the embedding runtime, by the same resolution (SKILLSMITH_EMBEDDING_RUNTIME_DIR, else $SKILLSMITH_HOME/runtime). */
export const testRuntimeDir = resolve(loadConfig(process.env).embeddingRuntimeDir);

/** Embedding settings for the real test model (all-MiniLM-L6-v2 int8, 384-d, no prefixes). */
export function testModelSettings(overrides: Partial<EmbeddingSettings> = {}): EmbeddingSettings {
  return {
    model: testEmbeddingModel.modelId,
    modelDir: testModelDir,
    allowRemoteModels: false,
    pooling: testEmbeddingModel.pooling,
    prefixes: testEmbeddingModel.prefixes,
    dimension: undefined,
    batchSize: 32,
    ...overrides,
  };
}

/** Fails (never skips) when the model has not been pulled. */
export async function requireTestModel(): Promise<void> {
  if (!(await isModelPresent(testModelDir))) {
    throw new Error(
      `the test embedding model ${testEmbeddingModel.modelId} is not in ${testModelDir}: ` +
        'run `node bin/skillsmith.js models pull --model sentence-transformers/all-MiniLM-L6-v2` first',
    );
  }
}
