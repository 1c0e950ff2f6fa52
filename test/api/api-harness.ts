import { createServices, type Services } from '../../src/app/services.ts';
import { pino } from 'pino';
import { buildApiServer, type ApiApp } from '../../src/api/server.ts';
import type { ApiTokenEntry } from '../../src/api/auth.ts';
import { loadConfig, type Config } from '../../src/app/config.ts';
import type { RecallFunction } from '../../src/recall/recall.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { requireTestModel, testModelSettings } from '../support/test-model.ts';

/** A migrated database, the application services (recall over the test model), and the API over them. */
export interface ApiHarness {
  database: TestDatabase;
  services: Services;
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
  options: { env?: Record<string, string>; withRecall?: boolean; recallThreshold?: number; temporalAddress?: string } = {},
): Promise<ApiHarness> {
  const database = await openTestDatabase();
  const config = loadConfig({ SKILLSMITH_API_BODY_LIMIT: '65536', ...options.env });
  const services = createServices(
    // With recall: the real embedder on the test model, at the given recall threshold.
    options.withRecall
      ? { ...config, embedding: testModelSettings(), recall: { ...config.recall, threshold: options.recallThreshold ?? 0.5 } }
      : config,
    database.pool,
    { logger: silentLogger, temporalAddress: options.temporalAddress },
  );
  if (options.withRecall) await requireTestModel();
  const recall: RecallFunction = options.withRecall
    ? services.recall
    : async () => {
        throw new Error('recall not wired in this harness');
      };
  const { skills } = services;
  const app = await buildApiServer({ ...services, recall, tokens });
  return {
    database,
    services,
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
