import { fileURLToPath } from 'node:url';
import type { EmbeddingSettings } from '../../src/embedding/embedder.ts';
import { isModelPresent, testEmbeddingModel } from '../../src/embedding/model-pull.ts';

/** Where `.ci/run` (and a developer) pulls the registry-shipped test model. */
export const testModelDir = fileURLToPath(new URL('../../.skillsmith/models', import.meta.url));

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
        'run `node bin/skillsmith.js models pull` first',
    );
  }
}
