import type pg from 'pg';
import { createApprovals, type Approvals } from '../authoring/approvals.ts';
import { createSkillManage, type SkillManage } from '../authoring/skill-manage.ts';
import type { Config } from './config.ts';
import { createConfiguredRolloutGate, type RolloutGate } from '../rollout/rollout-gate.ts';
import { createEmbedder, type Embedder, type EmbedderChoice } from '../embedding/embedder.ts';
import { useEmbeddingRuntime } from '../embedding/embedding-runtime.ts';
import { createTenantConfigCache } from './tenant-config-cache.ts';
import { TenantModelsChanged } from '../embedding/embedding-errors.ts';
import { configForTenant } from './tenant-config.ts';
import type { ChatClient } from '../llm/chat-client.ts';
import { createConfiguredChatClient } from '../llm/configured-chat-client.ts';
import type { Logger } from '../logging/logger.ts';
import { recallSkill, type RecallFunction } from '../recall/recall.ts';
import { createRecallUsage, type RecallUsage } from '../recall/recall-usage.ts';
import { QueryEmbeddings } from '../recall/query-embeddings.ts';
import { RecallSpaces } from '../recall/recall-space-cache.ts';
import { createAgentSpecRepository, type AgentSpecRepository } from '../sessions/agent-spec-repository.ts';
import { createSkillRepository, type SkillRepository } from '../store/skill-repository.ts';
import { createConfiguredDistiller } from '../synthesis/distiller-choice.ts';
import type { Distiller } from '../synthesis/distiller.ts';
import { createReadiness, type Readiness } from './readiness.ts';
import { createStorageFailureMemory, type StorageFailureMemory } from './storage-failure-memory.ts';
import { createRunIntake, type ReportRunFunction } from './run-intake.ts';
import { createLazyTemporalClient } from './temporal-client.ts';

/**
 * The application services over one pool — what the worker's activities, the HTTP API and the
 * CLI commands receive. The free functions of the domain (runs, passes, procedures, sessions)
 * take `pool` (or these services) directly.
 */
export interface Services {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
  skills: SkillRepository;
  agentSpecs: AgentSpecRepository;
  skillManage: SkillManage;
  /** The rollout gate: evidence, overrides, and each tenant's activation for the current combination. */
  rollout: RolloutGate;
  approvals: Approvals;
  /** The configuration of a tenant's work: its embedding model and that model's τ, cut and recall threshold (src/app/tenant-config.ts). */
  tenantConfig(tenantId: string): Promise<Config>;
  /**
   * The tenant's model, loaded on first use, once per process and model; a missing model fails only
   * what needs it. `background`: work nobody waits for, kept from holding the event loop (embedder.ts).
   */
  embedder(tenantId: string, choice?: EmbedderChoice): Promise<Embedder>;
  /** recall_skill over the tenant's embedder, recall space and recall threshold; each recall is recorded as use. */
  recall: RecallFunction;
  /** The recall spaces this process has read (src/recall/recall-space-cache.ts), shared by every recall it makes. */
  recallSpaces: RecallSpaces;
  /** last_used_at of recalled procedures, written in batches off the request path; flush before a process ends. */
  recallUsage: RecallUsage;
  /** The run intake; Temporal is connected on first use. */
  reportRun: ReportRunFunction;
  /** /readyz and `skillsmith status`: the database, Temporal and a worker on the task queue. */
  readiness: () => Promise<Readiness>;
  /** Writes this process saw refused for want of disk, which readiness reports (`SELECT 1` still answers). */
  storageFailures: StorageFailureMemory;
  /** The configured distiller; throws LlmNotConfigured when the LLM is chosen but not configured. */
  distiller(): Distiller;
  /** The reviewer's LLM; throws LlmNotConfigured when none is configured. */
  reviewer(): ChatClient;
}

export interface ServicesOptions {
  logger: Logger;
  /** TEMPORAL_ADDRESS, or the running stack's, for the run intake; config's when not given. */
  temporalAddress?: string | undefined;
}

/**
 * The one composition root: every repository and service over `pool`, built from `config`.
 * Nothing here connects or loads eagerly — the embedder, the LLMs and Temporal are reached on
 * first use, so a process starts (and serves what does not need them) without them.
 */
export function createServices(config: Config, pool: pg.Pool, options: ServicesOptions): Services {
  useEmbeddingRuntime(config.embeddingRuntimeDir);
  const storageFailures = createStorageFailureMemory();
  const skills = createSkillRepository({ pool, defaultLicense: config.skillLicense });
  const tenantConfig = (tenantId: string) => configForTenant(pool, config, tenantId);
  // createEmbedder loads once per process and model, and does not remember a failed load.
  const embedder = async (tenantId: string, choice?: EmbedderChoice) => createEmbedder((await tenantConfig(tenantId)).embedding, choice);
  // Recall's configuration is kept between requests and checked by recall's own statement (a read less per recall).
  const recallConfigs = createTenantConfigCache(pool, config);
  const recallUsage = createRecallUsage(pool, { onError: (error) => options.logger.warn({ err: error }, 'recording recall use failed') });
  const recallSpaces = new RecallSpaces();
  const queryEmbeddings = new QueryEmbeddings();
  const rollout = createConfiguredRolloutGate(pool, config);
  const temporal = createLazyTemporalClient(config, options.temporalAddress);
  return {
    pool,
    config,
    logger: options.logger,
    skills,
    agentSpecs: createAgentSpecRepository({ pool, skills }),
    skillManage: createSkillManage({
      pool,
      repository: skills,
      defaultLicense: config.skillLicense,
      settings: { enabled: config.authoring.enabled, approvalProfile: config.authoring.approvalProfile },
      activation: rollout,
    }),
    rollout,
    approvals: createApprovals({ pool, repository: skills, ttlHours: config.authoring.approvalTtlHours }),
    tenantConfig,
    embedder,
    recall: async (tenantId, request) => {
      const recallWith = async (kept: boolean) => {
        const { config: tenant, models } = await recallConfigs.get(tenantId);
        return recallSkill(
          {
            pool,
            embedder: await createEmbedder(tenant.embedding),
            threshold: tenant.recall.threshold,
            acceptanceSlack: tenant.recall.acceptanceSlack,
            usage: recallUsage,
            spaces: recallSpaces,
            queryEmbeddings,
            ...(kept ? { tenantModels: models } : {}),
          },
          tenantId,
          request,
        );
      };
      try {
        return await recallWith(true);
      } catch (error) {
        if (!(error instanceof TenantModelsChanged)) throw error;
        // The tenant moved (a reembed, a first embedding) since its configuration was kept: resolve it again, once.
        recallConfigs.forget(tenantId);
        return recallWith(false);
      }
    },
    recallUsage,
    recallSpaces,
    reportRun: createRunIntake({ config, pool, logger: options.logger, temporalAddress: options.temporalAddress, temporal }),
    readiness: createReadiness({
      pool,
      temporal,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      storageFailures,
    }),
    storageFailures,
    distiller: () => createConfiguredDistiller(config),
    reviewer: () => createConfiguredChatClient(config, 'SKILLSMITH_REVIEW_ENABLED=true'),
  };
}
