import type pg from 'pg';
import { insertProcedure } from '../../src/procedures/procedure-repository.ts';
import type { Procedure } from '../../src/procedures/procedure.ts';
import { serializeSkillDocument } from '../../src/skills/skill-format.ts';
import { withTransaction } from '../../src/store/database.ts';
import { createSkillRepository } from '../../src/store/skill-repository.ts';

/**
 * A tenant's procedure without a pass: the skill installed by an operator, then its procedure
 * (`when_to_use` "Rotate an API key.", one `keys.rotate` step, a 384-dimensional unit vector).
 */
export async function insertTestProcedure(pool: pg.Pool, tenantId: string, name = 'rotate-key'): Promise<Procedure> {
  const skills = createSkillRepository({ pool, defaultLicense: 'MIT' });
  const document = serializeSkillDocument(
    { name, version: '1.0.0', description: 'Rotate an API key.', requiredTools: ['keys.rotate'], license: 'MIT' },
    'Rotate the key.',
  );
  const revision = await skills.install(
    tenantId,
    { directoryName: name, files: new Map([['SKILL.md', new TextEncoder().encode(document)]]) },
    { source: 'operator' },
  );
  return withTransaction(pool, (client) =>
    insertProcedure(client, tenantId, {
      skillId: revision.skillId,
      name,
      revision: revision.revision,
      whenToUse: 'Rotate an API key.',
      toolSequence: [{ tool: 'keys.rotate', argumentNames: [] }],
      toolsRequired: ['keys.rotate'],
      successCount: 0,
      attemptCount: 0,
      fromSessions: [],
      embedding: Float32Array.from({ length: 384 }, (_, index) => (index === 0 ? 1 : 0)),
      embeddingModel: 'test-model',
    }),
  );
}
