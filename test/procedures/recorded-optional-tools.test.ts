import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countProcedureRuns, findRecordedOptionalTools, insertProcedure } from '../../src/procedures/procedure-repository.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { serializeSkillDocument } from '../../src/skills/skill-format.ts';
import { withTransaction } from '../../src/store/database.ts';
import { createSkillRepository } from '../../src/store/skill-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { testRun } from '../support/run-reports.ts';

const tenantId = 'acme';
const core = ['k8s.deployment.get', 'k8s.rollout.restart', 'k8s.rollout.status'];

const run = (runId: string, calls: Array<{ tool: string; success: boolean }>, status: 'completed' | 'failed' = 'completed') =>
  testRun(tenantId, runId, `restart the service (${runId})`, calls, status);
const ok = (...tools: string[]) => tools.map((tool) => ({ tool, success: true }));

describe('the optional steps a procedure’s own record shows (reconcile evidence)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a tool some but not all of its successful counted runs called, or some more often than others; failed calls and failed runs are no evidence', async () => {
    await upsertRuns(database.pool, tenantId, [
      run('r1', ok(...core, 'notify.slack')),
      run('r2', ok(...core, 'notify.slack')),
      // a retried call: the failed attempt of the same tool is no step; a failed call of another tool is none either
      run('r3', [{ tool: 'k8s.deployment.get', success: false }, ...ok(...core), { tool: 'pager.page', success: false }]),
      // a failed run counted as an attempt: its tools are not the procedure's evidence
      run('r4', ok('k8s.deployment.get', 'shell.exec'), 'failed'),
      // another procedure's runs: one call repeated as often in every run, one as many times as there were items
      run('h1', ok('hotels.search', 'hotels.search', 'hotel.policies', 'hotel.policies')),
      run('h2', ok('hotels.search', 'hotels.search', 'hotel.policies', 'hotel.policies', 'hotel.policies')),
    ]);
    const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'MIT' });
    const learn = async (name: string, tools: string[], runs: Array<{ runId: string; success: boolean }>) => {
      const document = serializeSkillDocument(
        { name, version: '1.0.0', description: 'Learned.', requiredTools: [...new Set(tools)], license: 'MIT' },
        '# Learned\n',
      );
      const revision = await skills.install(
        tenantId,
        { directoryName: name, files: new Map([['SKILL.md', new TextEncoder().encode(document)]]) },
        { source: 'operator' },
      );
      return withTransaction(database.pool, async (client) => {
        const stored = await insertProcedure(client, tenantId, {
          skillId: revision.skillId,
          name,
          revision: revision.revision,
          whenToUse: 'Learned.',
          toolSequence: tools.map((tool) => ({ tool, argumentNames: [] })),
          toolsRequired: [...new Set(tools)],
          successCount: 0,
          attemptCount: 0,
          fromSessions: [],
          embedding: new Float32Array(384).fill(1 / Math.sqrt(384)),
          embeddingModel: 'sentence-transformers/all-MiniLM-L6-v2',
        });
        await countProcedureRuns(client, tenantId, stored.id, 'pass-1', runs, 'sentence-transformers/all-MiniLM-L6-v2');
        return stored.id;
      });
    };
    const procedureId = await learn(
      'restart-service',
      [...core, 'notify.slack'],
      [
        { runId: 'r1', success: true },
        { runId: 'r2', success: true },
        { runId: 'r3', success: true },
        { runId: 'r4', success: false },
      ],
    );
    const loopId = await learn(
      'compare-hotel-policies',
      ['hotels.search', 'hotels.search', 'hotel.policies', 'hotel.policies'],
      [
        { runId: 'h1', success: true },
        { runId: 'h2', success: true },
      ],
    );
    expect(await findRecordedOptionalTools(database.pool, tenantId)).toEqual(
      new Map([
        [procedureId, ['notify.slack']],
        [loopId, ['hotel.policies']],
      ]),
    );
    expect(await findRecordedOptionalTools(database.pool, 'globex')).toEqual(new Map());
  });
});
