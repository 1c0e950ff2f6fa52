import type pg from 'pg';
import type { Config } from '../config.ts';
import { createEmbedder, type Embedder } from '../embedding/embedder.ts';
import type { Logger } from '../logger.ts';
import { recallSkill } from '../recall/recall.ts';
import { createSkillRepository } from '../store/skill-repository.ts';
import { startApiServer, type ApiDependencies, type RunningApi } from './server.ts';

/**
 * The API's real dependencies over one pool: the skill repository and recall over the
 * configured embedder. The embedder loads on the first recall, so the API starts (and serves
 * sessions) even when the model is absent; recall then answers 503 EmbeddingModelUnavailable.
 */
export function createApiDependencies({ pool, config, logger }: { pool: pg.Pool; config: Config; logger: Logger }): ApiDependencies {
  const skills = createSkillRepository({ pool, defaultLicense: config.skillLicense });
  let embedder: Promise<Embedder> | undefined;
  const loadEmbedder = () => {
    embedder ??= createEmbedder(config.embedding).catch((error: unknown) => {
      embedder = undefined;
      throw error;
    });
    return embedder;
  };
  return {
    pool,
    config,
    logger,
    skills,
    recall: async (tenantId, request) =>
      recallSkill({ pool, skills, embedder: await loadEmbedder(), similarityTau: config.synthesis.similarityTau }, tenantId, request),
  };
}

/** `skillsmith api` and `skillsmith up`: the API listening on config.api.host:port. */
export function startApi(options: { pool: pg.Pool; config: Config; logger: Logger }): Promise<RunningApi> {
  return startApiServer(createApiDependencies(options));
}
