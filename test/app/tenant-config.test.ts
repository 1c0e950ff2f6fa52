import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { ensureEmbeddingModel } from '../../src/embedding/goal-embedding-repository.ts';
import { TenantEmbeddingModelMismatch } from '../../src/embedding/embedding-errors.ts';
import { configForTenant } from '../../src/app/tenant-config.ts';
import { DEFAULT_EMBEDDING_MODEL_ID } from '../../src/embedding/model-profiles.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

const MINILM = 'sentence-transformers/all-MiniLM-L6-v2';
const NOMIC = 'nomic-ai/nomic-embed-text-v1.5';

describe("a tenant's embedding model is data: every command uses it", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
    // The demo's tenant: embedded with the registry-shipped model while nothing was set.
    await ensureEmbeddingModel(database.pool, 'demo', { modelId: MINILM, dimension: 384 });
    await ensureEmbeddingModel(database.pool, 'custom', { modelId: 'acme/embed-small', dimension: 256 });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('with nothing set, a tenant embedded with MiniLM runs with MiniLM and its τ, cut and recall threshold', async () => {
    const config = await configForTenant(database.pool, loadConfig({}), 'demo');
    expect(config.embedding).toMatchObject({ model: MINILM, pooling: 'mean', prefixes: 'none', dimension: 384 });
    expect(config.synthesis).toMatchObject({ similarityTau: 0.82, clusterTau: 0.75 });
    expect(config.recall.threshold).toBe(0.415);
  });

  it('what was set explicitly still wins over the profile of the tenant’s model', async () => {
    const config = await configForTenant(database.pool, loadConfig({ SKILLSMITH_RECALL_THRESHOLD: '0.3' }), 'demo');
    expect(config.embedding.model).toBe(MINILM);
    expect(config.recall.threshold).toBe(0.3);
  });

  it('a tenant with nothing embedded yet takes the configured model', async () => {
    expect((await configForTenant(database.pool, loadConfig({}), 'fresh')).embedding.model).toBe(DEFAULT_EMBEDDING_MODEL_ID);
    const minilm = loadConfig({ SKILLSMITH_EMBEDDING_MODEL: MINILM });
    expect(await configForTenant(database.pool, minilm, 'fresh')).toBe(minilm);
    expect(await configForTenant(database.pool, minilm, 'demo')).toBe(minilm);
  });

  it('a different model set explicitly is refused, with the reembed command that moves the tenant', async () => {
    const attempt = configForTenant(database.pool, loadConfig({ SKILLSMITH_EMBEDDING_MODEL: NOMIC }), 'demo');
    await expect(attempt).rejects.toBeInstanceOf(TenantEmbeddingModelMismatch);
    await expect(attempt).rejects.toThrow(
      `tenant demo is embedded with ${MINILM}, but SKILLSMITH_EMBEDDING_MODEL=${NOMIC}: unset SKILLSMITH_EMBEDDING_MODEL to use ${MINILM}, ` +
        `or move the tenant to ${NOMIC} with \`SKILLSMITH_EMBEDDING_MODEL=${NOMIC} npx skillsmith reembed --tenant demo\``,
    );
    await expect(attempt).rejects.toMatchObject({ code: 'TenantEmbeddingModelMismatch', httpStatus: 503, retryable: false });
  });

  it('a tenant on a model without a profile needs its variables, and the error names them', async () => {
    await expect(configForTenant(database.pool, loadConfig({}), 'custom')).rejects.toThrow(
      /acme\/embed-small is not a model skillsmith knows .*: set SKILLSMITH_EMBEDDING_POOLING, SKILLSMITH_EMBEDDING_PREFIXES, SKILLSMITH_SIMILARITY_TAU, SKILLSMITH_CLUSTER_TAU, SKILLSMITH_RECALL_THRESHOLD/,
    );
  });
});
