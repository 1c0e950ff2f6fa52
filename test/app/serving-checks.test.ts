import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDistiller, checkEmbedders } from '../../src/app/serving-checks.ts';
import { loadConfig } from '../../src/app/config.ts';
import { ensureEmbeddingModel } from '../../src/embedding/goal-embedding-repository.ts';
import { DEFAULT_EMBEDDING_MODEL_ID } from '../../src/embedding/model-profiles.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelDir } from '../support/test-model.ts';

const MINILM = 'sentence-transformers/all-MiniLM-L6-v2';

describe('`up` checks what recall and passes need: every tenant’s embedding model, the distiller', () => {
  let database: TestDatabase;
  let llm: Server;
  let llmUrl: string;
  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    llm = createServer((request, response) => {
      if (request.url === '/v1/models') response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      else response.writeHead(404).end();
    });
    await new Promise<void>((done) => llm.listen(0, '127.0.0.1', done));
    llmUrl = `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((done) => llm?.close(done));
    await database?.close();
  });

  it('no tenant yet: the default model, which new tenants take; missing, it fails with the offline command that gets it', async () => {
    const checks = await checkEmbedders(database.pool, loadConfig({ SKILLSMITH_MODEL_DIR: testModelDir }));
    expect(checks).toEqual([
      { name: 'embedder', ok: true, detail: `${DEFAULT_EMBEDDING_MODEL_ID} loads and embeds (384-d; new tenants take it)` },
    ]);
    const empty = await mkdtemp(join(tmpdir(), 'skillsmith-no-models-'));
    const missing = await checkEmbedders(database.pool, loadConfig({ SKILLSMITH_MODEL_DIR: empty }));
    await rm(empty, { recursive: true, force: true });
    expect(missing).toEqual([
      {
        name: 'embedder',
        ok: false,
        detail: expect.stringMatching(
          new RegExp(`^embedding model ${DEFAULT_EMBEDDING_MODEL_ID} is unavailable .*; get it with: npx skillsmith models pull$`),
        ),
      },
    ]);
  });

  it("with nothing set, the tenants' models and the default a new tenant takes; set explicitly, that one too", async () => {
    await ensureEmbeddingModel(database.pool, 'demo', { modelId: MINILM, dimension: 384 });
    const unset = await checkEmbedders(database.pool, loadConfig({ SKILLSMITH_MODEL_DIR: testModelDir }));
    expect(unset).toEqual([
      { name: 'embedder', ok: true, detail: `${DEFAULT_EMBEDDING_MODEL_ID} loads and embeds (384-d; new tenants take it)` },
      { name: 'embedder', ok: true, detail: `${MINILM} loads and embeds (384-d; a tenant is embedded with it)` },
    ]);
    const explicit = await checkEmbedders(
      database.pool,
      loadConfig({ SKILLSMITH_MODEL_DIR: testModelDir, SKILLSMITH_EMBEDDING_MODEL: 'nomic-ai/nomic-embed-text-v1.5' }),
    );
    expect(explicit.map((check) => check.ok)).toEqual([false, true]);
  });

  it('the distiller: extractive always; the LLM only when configured and answering', async () => {
    expect(await checkDistiller(loadConfig({}))).toEqual({ name: 'distiller', ok: true, detail: 'extractive (no model needed)' });
    expect(await checkDistiller(loadConfig({ SKILLSMITH_DISTILLER: 'llm' }))).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/SKILLSMITH_DISTILLER=llm .*needs an LLM but SKILLSMITH_LLM_BASE_URL is not set/),
    });
    expect(await checkDistiller(loadConfig({ SKILLSMITH_LLM_BASE_URL: llmUrl }))).toMatchObject({
      ok: true,
      detail: `llm llama3.1 at ${llmUrl} (GET /models answered 200)`,
    });
    const down = `http://127.0.0.1:${await freePort()}/v1`;
    expect(await checkDistiller(loadConfig({ SKILLSMITH_LLM_BASE_URL: down }))).toMatchObject({
      ok: false,
      detail: expect.stringMatching(
        new RegExp(`^llm at ${down}: GET ${down}/models failed: .*ECONNREFUSED.*\\(SKILLSMITH_LLM_BASE_URL\\)$`),
      ),
    });
  });
});
