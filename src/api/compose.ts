import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { createApprovals } from '../authoring/approvals.ts';
import { createSkillManage } from '../authoring/skill-manage.ts';
import { reportRunCompleted } from '../client/run-intake-client.ts';
import { TemporalUnavailable } from '../client/temporal-unavailable.ts';
import type { Config } from '../config.ts';
import { createEmbedder } from '../embedding/embedder.ts';
import type { Logger } from '../logger.ts';
import { recallSkill } from '../recall/recall.ts';
import { createSkillRepository } from '../store/skill-repository.ts';
import { startApiServer, type ApiDependencies, type RunningApi } from './server.ts';

/** Connects once, on first use; a failure is not remembered, so a fixed cause heals without a restart. */
function lazily<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/**
 * The API's real dependencies over one pool: the skill repository, recall over the configured
 * embedder, skill_manage and approvals, and the run intake over Temporal. The embedder and the
 * Temporal connection open on first use, so the API starts (and serves sessions) without them;
 * the routes that need them answer 503 with the reason.
 */
export function createApiDependencies(options: {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
  /** TEMPORAL_ADDRESS, or the running stack's; undefined → POST /v1/runs answers 503. */
  temporalAddress?: string | undefined;
}): ApiDependencies {
  const { pool, config, logger } = options;
  const skills = createSkillRepository({ pool, defaultLicense: config.skillLicense });
  const temporal = lazily<Client>(async () => {
    const address = options.temporalAddress ?? config.temporal.address;
    if (!address) throw new TemporalUnavailable('no Temporal for the run intake: set TEMPORAL_ADDRESS, or run the API inside `skillsmith up`');
    try {
      return new Client({ connection: await Connection.connect({ address, connectTimeout: 5_000 }), namespace: config.temporal.namespace });
    } catch (error) {
      throw new TemporalUnavailable(`Temporal at ${address} does not answer: ${(error as Error).message}`);
    }
  });
  return {
    pool,
    config,
    logger,
    skills,
    recall: async (tenantId, request) =>
      // createEmbedder loads once per process and does not remember a failed load.
      recallSkill({ pool, skills, embedder: await createEmbedder(config.embedding), similarityTau: config.synthesis.similarityTau }, tenantId, request),
    reportRun: async (report) => reportRunCompleted(await temporal(), report, { taskQueue: config.temporal.taskQueue }),
    skillManage: createSkillManage({
      pool,
      repository: skills,
      defaultLicense: config.skillLicense,
      settings: { enabled: config.authoring.enabled, approvalProfile: config.authoring.approvalProfile },
    }),
    approvals: createApprovals({ pool, repository: skills, ttlHours: config.authoring.approvalTtlHours }),
  };
}

/** `skillsmith api` and `skillsmith up`: the API listening on config.api.host:port. */
export function startApi(options: Parameters<typeof createApiDependencies>[0]): Promise<RunningApi> {
  return startApiServer(createApiDependencies(options));
}
