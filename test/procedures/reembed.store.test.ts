import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedMissingGoals } from '../../src/embedding/embed-goals.ts';
import { createEmbedder, type Embedder } from '../../src/embedding/embedder.ts';
import { EmbeddingDimensionMismatch } from '../../src/embedding/embedding-errors.ts';
import { ensureEmbeddingModel, insertGoalEmbeddings, listEmbeddingModels } from '../../src/embedding/goal-embedding-repository.ts';
import { reembedTenant } from '../../src/procedures/reembed.ts';
import { insertProcedure, listProcedures } from '../../src/procedures/procedure-repository.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { withTransaction } from '../../src/store/database.ts';
import { createSkillRepository } from '../../src/store/skill-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelSettings } from '../support/test-model.ts';

describe('skillsmith reembed: the explicit way past a dimension mismatch', () => {
  let database: TestDatabase;
  let embedder: Embedder;
  const tenantId = 'reembed';

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    embedder = await createEmbedder(testModelSettings());
    const runs = generateRuns({ seed: 4, runs: 30, tenantId }).map(({ report }) => report);
    await upsertRuns(database.pool, tenantId, runs);
    // An older, 3-d model embedded the goals and a procedure before the switch.
    const oldModel = { modelId: 'old/tiny-3d', dimension: 3 };
    await ensureEmbeddingModel(database.pool, tenantId, oldModel);
    await insertGoalEmbeddings(
      database.pool,
      tenantId,
      oldModel,
      runs.map((run) => ({ runId: run.runId, embedding: Float32Array.from([1, 0, 0]) })),
    );
    const skill = await createSkillRepository({ pool: database.pool, defaultLicense: 'MIT' }).install(
      tenantId,
      {
        directoryName: 'deploy-service',
        files: new Map([
          [
            'SKILL.md',
            new TextEncoder().encode(
              '---\nname: deploy-service\ndescription: Deploy a service.\nmetadata:\n  version: 1.0.0\n---\n\n1. Deploy.\n',
            ),
          ],
        ]),
      },
      { source: 'operator' },
    );
    await withTransaction(database.pool, (client) =>
      insertProcedure(client, tenantId, {
        skillId: skill.skillId,
        name: 'deploy-service',
        revision: 1,
        whenToUse: 'Deploy a service to an environment.',
        toolSequence: [],
        toolsRequired: [],
        successCount: 3,
        attemptCount: 3,
        fromSessions: [],
        embedding: Float32Array.from([0, 1, 0]),
        embeddingModel: 'old/tiny-3d',
      }),
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  it('refuses the new model while the old vectors are stored, then moves every goal and procedure to it', async () => {
    await expect(embedMissingGoals(database.pool, embedder, tenantId, { pageSize: 64 })).rejects.toThrow(EmbeddingDimensionMismatch);
    await expect(embedMissingGoals(database.pool, embedder, tenantId, { pageSize: 64 })).rejects.toThrow(
      /384-d vectors but 3-d are expected/,
    );

    const result = await reembedTenant(database.pool, embedder, tenantId, { pageSize: 64 });
    expect(result).toEqual({
      tenantId,
      modelId: embedder.modelId,
      dimension: 384,
      droppedGoalEmbeddings: 30,
      embeddedGoals: 30,
      reembeddedProcedures: 1,
    });
    expect(await listEmbeddingModels(database.pool, tenantId)).toEqual([{ modelId: embedder.modelId, dimension: 384 }]);
    const [procedure] = await listProcedures(database.pool, tenantId);
    expect(procedure).toMatchObject({ embeddingModel: embedder.modelId, embeddingDimension: 384 });
    const again = await reembedTenant(database.pool, embedder, tenantId, { pageSize: 64 });
    expect(again).toMatchObject({ droppedGoalEmbeddings: 0, embeddedGoals: 0, reembeddedProcedures: 0 });
  });
});
