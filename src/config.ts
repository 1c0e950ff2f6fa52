import { z } from 'zod';
import { SkillsmithError } from './skillsmith-error.ts';
import { defaultRecallThreshold } from './recall/recall-threshold.ts';

/**
 * Every setting skillsmith reads, as one zod schema over the environment.
 * Read once at start-up (`loadConfig`) and passed down; nothing else touches process.env.
 */

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const fraction = z.coerce.number().min(0).max(1);
const positiveInt = z.coerce.number().int().positive();

const environmentSchema = z
  .object({
    SKILLSMITH_HOME: z.string().min(1).default('.skillsmith'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL')
      .optional(),
    TEMPORAL_ADDRESS: z
      .string()
      .regex(/^[^\s:/]+:\d{1,5}$/, 'host:port, e.g. 127.0.0.1:7233')
      .optional(),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('skillsmith'),
    TEMPORAL_CLI_PATH: z.string().min(1).optional(),
    SKILLSMITH_TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
    SKILLSMITH_TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
    SKILLSMITH_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(5433),
    SKILLSMITH_EMBEDDED_DATABASE: z.enum(['native', 'pglite']).optional(),
    SKILLSMITH_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SKILLSMITH_SKILL_LICENSE: z.string().min(1).default('Apache-2.0'),

    SKILLSMITH_EMBEDDING_MODEL: z.string().min(1).default('nomic-ai/nomic-embed-text-v1.5'),
    SKILLSMITH_MODEL_DIR: z.string().min(1).optional(),
    SKILLSMITH_ALLOW_REMOTE_MODELS: booleanFlag.default(false),
    SKILLSMITH_EMBEDDING_POOLING: z.enum(['mean', 'cls']).default('mean'),
    SKILLSMITH_EMBEDDING_PREFIXES: z.enum(['nomic', 'none']).default('nomic'),
    SKILLSMITH_EMBEDDING_DIMENSION: positiveInt.optional(),
    SKILLSMITH_EMBEDDING_BATCH_SIZE: positiveInt.max(1024).default(32),

    SKILLSMITH_SIMILARITY_TAU: fraction.default(0.82),
    SKILLSMITH_CLUSTER_LINKAGE: z.enum(['average', 'complete', 'single']).default('average'),
    // Unset: the embedding model's measured defaults (clusteringDefaultsByModel).
    SKILLSMITH_CLUSTER_SIMILARITY: z.enum(['goal', 'product', 'mix', 'gate']).optional(),
    SKILLSMITH_CLUSTER_TAU: fraction.optional(),
    SKILLSMITH_CLUSTER_GOAL_WEIGHT: fraction.optional(),
    SKILLSMITH_CLUSTER_TOOL_TAU: fraction.optional(),
    SKILLSMITH_CLUSTER_MAX_COMPONENT: positiveInt.default(4_000),
    SKILLSMITH_MIN_OCCURRENCES: positiveInt.default(3),
    SKILLSMITH_MIN_SUCCESS_RATE: fraction.default(0.8),
    SKILLSMITH_MIN_STEPS: positiveInt.default(3),
    SKILLSMITH_MAX_CLUSTERS_PER_PASS: positiveInt.default(10),
    SKILLSMITH_SYNTHESIS_ENABLED: booleanFlag.default(true),
    SKILLSMITH_DISTILLER: z.enum(['llm', 'extractive']).default('llm'),
    // Unset: the embedding model's calibrated default (src/recall/recall-threshold.ts, bench/README.md).
    SKILLSMITH_RECALL_THRESHOLD: z.coerce.number().min(-1).max(1).optional(),

    SKILLSMITH_LLM_BASE_URL: z.url({ message: 'an http(s) URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1' }).optional(),
    SKILLSMITH_LLM_MODEL: z.string().min(1).default('llama3.1'),
    SKILLSMITH_LLM_API_KEY: z.string().min(1).optional(),
    SKILLSMITH_LLM_TIMEOUT_MS: positiveInt.default(120_000),

    SKILLSMITH_API_HOST: z.string().min(1).default('127.0.0.1'),
    SKILLSMITH_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    SKILLSMITH_API_TOKENS: z.string().min(1).optional(),
    SKILLSMITH_API_BODY_LIMIT: positiveInt.default(1_048_576),
    SKILLSMITH_SKILL_SYNC_MAX_BYTES: positiveInt.default(4096),
    SKILLSMITH_METRICS_PUBLIC: booleanFlag.default(false),
    SKILLSMITH_WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    SKILLSMITH_WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),

    SKILLSMITH_AUTHORING_ENABLED: booleanFlag.default(false),
    SKILLSMITH_REVIEW_ENABLED: booleanFlag.default(false),
    SKILLSMITH_APPROVAL_PROFILE: z.enum(['none', 'skill_authoring']).default('none'),
    SKILLSMITH_APPROVAL_TTL_HOURS: positiveInt.default(72),
    SKILLSMITH_MODEL_POLICY: z
      .string()
      .min(1)
      .max(200)
      .regex(/^\S(?:.*\S)?$/s, 'no leading or trailing whitespace')
      .optional(),
  })
  .superRefine((environment, context) => {
    if (
      environment.SKILLSMITH_RECALL_THRESHOLD === undefined &&
      defaultRecallThreshold(environment.SKILLSMITH_EMBEDDING_MODEL) === undefined
    ) {
      context.addIssue({
        code: 'custom',
        path: ['SKILLSMITH_RECALL_THRESHOLD'],
        message: `no calibrated recall threshold for ${environment.SKILLSMITH_EMBEDDING_MODEL}: set one (bench/README.md says how to calibrate it)`,
      });
    }
    // The 002 spec's rollout controls: background review is invalid without foreground authoring.
    if (environment.SKILLSMITH_REVIEW_ENABLED && !environment.SKILLSMITH_AUTHORING_ENABLED) {
      context.addIssue({
        code: 'custom',
        path: ['SKILLSMITH_REVIEW_ENABLED'],
        message:
          'background review requires foreground authoring: set SKILLSMITH_AUTHORING_ENABLED=true, or SKILLSMITH_REVIEW_ENABLED=false',
      });
    }
  });

export type Environment = z.input<typeof environmentSchema>;

export type ClusterSimilarity = 'goal' | 'product' | 'mix' | 'gate';

/** How runs are judged alike when clustering (src/clustering/run-similarity.ts). */
export interface ClusteringDefaults {
  similarity: ClusterSimilarity;
  /** The cut of `product` and `mix` on their combined score. */
  clusterTau: number;
  /** `mix`: the goal cosine's weight; the tool-sequence similarity has the rest. */
  goalWeight: number;
  /** `gate`: the tool-sequence similarity a pair needs besides goal cosine ≥ SKILLSMITH_SIMILARITY_TAU. */
  toolTau: number;
}

/**
 * Clustering defaults per embedding model, chosen on NESTFUL and the generated corpus
 * (bench/README.md, "Procedure-aware clustering"). A goal cosine's scale is the model's own, so
 * the cut moves with it. all-MiniLM-L6-v2 is measured; nomic-embed-text-v1.5 cannot be obtained
 * here, so its cut is MiniLM's shifted by the goal weight times the difference of the two models'
 * goal-only τ (0.82 − 0.5): a derivation to re-measure, not a measurement. Other models get nomic's.
 */
export const clusteringDefaultsByModel: Readonly<Record<string, ClusteringDefaults>> = {
  'sentence-transformers/all-MiniLM-L6-v2': { similarity: 'mix', clusterTau: 0.7, goalWeight: 0.5, toolTau: 0.85 },
  'nomic-ai/nomic-embed-text-v1.5': { similarity: 'mix', clusterTau: 0.86, goalWeight: 0.5, toolTau: 0.85 },
};

export function clusteringDefaultsFor(modelId: string): ClusteringDefaults {
  return clusteringDefaultsByModel[modelId] ?? clusteringDefaultsByModel['nomic-ai/nomic-embed-text-v1.5']!;
}

export interface Config {
  home: string;
  databaseUrl: string | undefined;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    cliPath: string | undefined;
    port: number;
    uiPort: number;
  };
  postgresPort: number;
  /** The stack's own database when DATABASE_URL is unset: native PostgreSQL (default where a wheel is pinned) or PGlite; unset = native, else PGlite. */
  embeddedDatabase: 'native' | 'pglite' | undefined;
  logLevel: z.infer<typeof environmentSchema>['SKILLSMITH_LOG_LEVEL'];
  skillLicense: string;
  embedding: {
    model: string;
    modelDir: string;
    allowRemoteModels: boolean;
    pooling: 'mean' | 'cls';
    prefixes: 'nomic' | 'none';
    dimension: number | undefined;
    batchSize: number;
  };
  synthesis: {
    /** Goal-cosine τ: the `goal` design's cut, the `gate` design's goal threshold, recall and reconcile. */
    similarityTau: number;
    linkage: 'average' | 'complete' | 'single';
    clusterSimilarity: ClusterSimilarity;
    clusterTau: number;
    clusterGoalWeight: number;
    clusterToolTau: number;
    /** Largest threshold-graph component clustered with a dense distance matrix; larger ones take the sparse chain. */
    clusterDenseComponentLimit: number;
    minOccurrences: number;
    minSuccessRate: number;
    minSteps: number;
    maxClustersPerPass: number;
    enabled: boolean;
    distiller: 'llm' | 'extractive';
  };
  recall: {
    /** The best cosine a procedure needs with a goal to be recalled; calibrated per model, separate from the clustering τ. */
    threshold: number;
  };
  llm: {
    baseUrl: string | undefined;
    model: string;
    apiKey: string | undefined;
    timeoutMs: number;
  };
  api: {
    host: string;
    port: number;
    /** JSON array of {token, tenantId, principal, scopes} or the path of a file holding one. */
    tokens: string | undefined;
    bodyLimitBytes: number;
  };
  /** `skills sync` warns skill_too_large for a SKILL.md over this many bytes. */
  skillSyncMaxBytes: number;
  metrics: {
    /**
     * GET /metrics without a token, every tenant's series (SKILLSMITH_METRICS_PUBLIC): for a
     * Prometheus on a private network. Otherwise a token with scope `metrics.read` sees its tenant's.
     */
    public: boolean;
    /** The Temporal SDK's Prometheus endpoint of a worker process (`host:port/metrics`); no port = off. */
    workerHost: string;
    workerPort: number | undefined;
  };
  authoring: {
    /** Foreground skill_manage (SKILLSMITH_AUTHORING_ENABLED). */
    enabled: boolean;
    /** Background review (SKILLSMITH_REVIEW_ENABLED); requires `enabled`. */
    reviewEnabled: boolean;
    /** `skill_authoring`: every skill_manage write waits for an approval. */
    approvalProfile: 'none' | 'skill_authoring';
    approvalTtlHours: number;
  };
  rollout: {
    /**
     * The model policy that rollout evidence is keyed by (SKILLSMITH_MODEL_POLICY, default the
     * LLM model): a tenant's authoring activates only on evidence recorded for it.
     */
    modelPolicy: string;
  };
}

/** A setting that failed validation; the message names the variable and the expected form. */
export class ConfigError extends SkillsmithError {
  static override readonly code = 'ConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(environmentSchema.shape)
      .filter((key) => env[key] !== undefined && env[key] !== '')
      .map((key) => [key, env[key]]),
  );
  const parsed = environmentSchema.safeParse(known);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    throw new ConfigError(variable, `invalid ${variable}=${JSON.stringify(env[variable])}: ${issue.message}`);
  }
  const e = parsed.data;
  const clustering = clusteringDefaultsFor(e.SKILLSMITH_EMBEDDING_MODEL);
  return {
    home: e.SKILLSMITH_HOME,
    databaseUrl: e.DATABASE_URL,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      port: e.SKILLSMITH_TEMPORAL_PORT,
      uiPort: e.SKILLSMITH_TEMPORAL_UI_PORT,
    },
    postgresPort: e.SKILLSMITH_POSTGRES_PORT,
    embeddedDatabase: e.SKILLSMITH_EMBEDDED_DATABASE,
    logLevel: e.SKILLSMITH_LOG_LEVEL,
    skillLicense: e.SKILLSMITH_SKILL_LICENSE,
    embedding: {
      model: e.SKILLSMITH_EMBEDDING_MODEL,
      modelDir: e.SKILLSMITH_MODEL_DIR ?? `${e.SKILLSMITH_HOME}/models`,
      allowRemoteModels: e.SKILLSMITH_ALLOW_REMOTE_MODELS,
      pooling: e.SKILLSMITH_EMBEDDING_POOLING,
      prefixes: e.SKILLSMITH_EMBEDDING_PREFIXES,
      dimension: e.SKILLSMITH_EMBEDDING_DIMENSION,
      batchSize: e.SKILLSMITH_EMBEDDING_BATCH_SIZE,
    },
    synthesis: {
      similarityTau: e.SKILLSMITH_SIMILARITY_TAU,
      linkage: e.SKILLSMITH_CLUSTER_LINKAGE,
      clusterSimilarity: e.SKILLSMITH_CLUSTER_SIMILARITY ?? clustering.similarity,
      clusterTau: e.SKILLSMITH_CLUSTER_TAU ?? clustering.clusterTau,
      clusterGoalWeight: e.SKILLSMITH_CLUSTER_GOAL_WEIGHT ?? clustering.goalWeight,
      clusterToolTau: e.SKILLSMITH_CLUSTER_TOOL_TAU ?? clustering.toolTau,
      clusterDenseComponentLimit: e.SKILLSMITH_CLUSTER_MAX_COMPONENT,
      minOccurrences: e.SKILLSMITH_MIN_OCCURRENCES,
      minSuccessRate: e.SKILLSMITH_MIN_SUCCESS_RATE,
      minSteps: e.SKILLSMITH_MIN_STEPS,
      maxClustersPerPass: e.SKILLSMITH_MAX_CLUSTERS_PER_PASS,
      enabled: e.SKILLSMITH_SYNTHESIS_ENABLED,
      distiller: e.SKILLSMITH_DISTILLER,
    },
    recall: {
      threshold: e.SKILLSMITH_RECALL_THRESHOLD ?? defaultRecallThreshold(e.SKILLSMITH_EMBEDDING_MODEL)!,
    },
    llm: {
      baseUrl: e.SKILLSMITH_LLM_BASE_URL,
      model: e.SKILLSMITH_LLM_MODEL,
      apiKey: e.SKILLSMITH_LLM_API_KEY,
      timeoutMs: e.SKILLSMITH_LLM_TIMEOUT_MS,
    },
    api: {
      host: e.SKILLSMITH_API_HOST,
      port: e.SKILLSMITH_API_PORT,
      tokens: e.SKILLSMITH_API_TOKENS,
      bodyLimitBytes: e.SKILLSMITH_API_BODY_LIMIT,
    },
    skillSyncMaxBytes: e.SKILLSMITH_SKILL_SYNC_MAX_BYTES,
    metrics: {
      public: e.SKILLSMITH_METRICS_PUBLIC,
      workerHost: e.SKILLSMITH_WORKER_METRICS_HOST,
      workerPort: e.SKILLSMITH_WORKER_METRICS_PORT,
    },
    authoring: {
      enabled: e.SKILLSMITH_AUTHORING_ENABLED,
      reviewEnabled: e.SKILLSMITH_REVIEW_ENABLED,
      approvalProfile: e.SKILLSMITH_APPROVAL_PROFILE,
      approvalTtlHours: e.SKILLSMITH_APPROVAL_TTL_HOURS,
    },
    rollout: {
      modelPolicy: e.SKILLSMITH_MODEL_POLICY ?? e.SKILLSMITH_LLM_MODEL,
    },
  };
}

/** The documented settings, for `--help` and the README table. */
export const settingNames = Object.keys(environmentSchema.shape);
