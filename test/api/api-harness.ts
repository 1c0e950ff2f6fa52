import { createApiDependencies } from '../../src/api/compose.ts';
import { pino } from 'pino';
import { buildApiServer, type ApiApp, type RecallFunction } from '../../src/api/server.ts';
import type { ApiTokenEntry } from '../../src/api/auth.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { recallSkill } from '../../src/recall/recall.ts';
import { createSkillRepository, type SkillRepository } from '../../src/store/skill-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelSettings } from '../support/test-model.ts';

/** A migrated database, the real skill repository, the real recall over the test model, and the API. */
export interface ApiHarness {
  database: TestDatabase;
  skills: SkillRepository;
  config: Config;
  app: ApiApp;
  close(): Promise<void>;
}

export const silentLogger = pino({ level: 'silent' });

export function token(tenantId: string, scopes: string[], principal = `${tenantId}-principal`): ApiTokenEntry {
  return { token: `tok-${tenantId}-${scopes.join('+')}-0123456789abcdef`, tenantId, principal, scopes };
}

export const ALL_SCOPES = ['session.write', 'session.read', 'skill.read', 'recall.read'];

export async function openApiHarness(
  tokens: ApiTokenEntry[],
  options: { env?: Record<string, string>; withRecall?: boolean; similarityTau?: number; temporalAddress?: string } = {},
): Promise<ApiHarness> {
  const database = await openTestDatabase();
  const config = loadConfig({ SKILLSMITH_API_BODY_LIMIT: '65536', ...options.env });
  const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'Apache-2.0' });
  let recall: RecallFunction = async () => {
    throw new Error('recall not wired in this harness');
  };
  if (options.withRecall) {
    await requireTestModel();
    const embedder = await createEmbedder(testModelSettings());
    const similarityTau = options.similarityTau ?? 0.5;
    recall = (tenantId, request) => recallSkill({ pool: database.pool, skills, embedder, similarityTau }, tenantId, request);
  }
  const app = await buildApiServer({
    ...createApiDependencies({ pool: database.pool, config, logger: silentLogger, temporalAddress: options.temporalAddress }),
    skills,
    recall,
    tokens,
  });
  return {
    database,
    skills,
    config,
    app,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

export function bearer(entry: ApiTokenEntry): { authorization: string } {
  return { authorization: `Bearer ${entry.token}` };
}
